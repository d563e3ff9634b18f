"""What the workers keep in the database about themselves: who holds each run (a lease
with a fencing epoch), which worker processes are alive (heartbeats), and where engine
snapshots of a run's state were written."""
from __future__ import annotations

from django.db import models


class RunLease(models.Model):
    """The one worker that may apply a run's ticks, until `expires_at`.

    The holder renews it from a heartbeat thread while its process lives. Another
    worker may take it once it has expired; taking it bumps `epoch`, so a holder that
    lost it (paused by the OS, cut off, killed and restarted) can never commit a tick:
    every tick's transaction checks that (worker, epoch) still holds a live lease.
    """

    run = models.OneToOneField("runs.Run", on_delete=models.CASCADE, primary_key=True, related_name="lease")
    worker = models.CharField(max_length=200)
    epoch = models.PositiveIntegerField(default=1)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    #: Attempts at the run's next tick that did not end (the worker died in it, or its
    #: commit was refused): counted when a tick starts, reset when one commits. Kept
    #: across takeovers, so a tick that kills every worker taking it fails the run
    #: (DBSPWEB_TICK_MAX_ATTEMPTS) instead of being re-driven forever.
    attempts = models.PositiveIntegerField(default=0)
    #: What the last unfinished attempt is known to have hit (an error, a node), for the run's error.
    attempt_note = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"run {self.run_id} held by {self.worker} (epoch {self.epoch}) until {self.expires_at:%H:%M:%S}"


class WorkerHeartbeat(models.Model):
    """A live worker process: renewed every heartbeat, read by /api/health/ and the sweeper."""

    worker = models.CharField(max_length=200, primary_key=True)
    queue = models.CharField(max_length=300)  # the worker's own queue (tasks for runs it holds)
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.worker} (seen {self.last_seen:%H:%M:%S})"


class Snapshot(models.Model):
    """Engine state of a run as of the end of `tick`, written under DBSPWEB_SNAPSHOT_DIR.

    Recovery restores the newest snapshot at or before the run's current tick and
    replays the applied input log after it.
    """

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="snapshots")
    tick = models.IntegerField()
    path = models.CharField(max_length=1000)
    worker = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "-tick"]
        constraints = [models.UniqueConstraint(fields=["run", "tick"], name="unique_snapshot_tick")]
