"""A run's connectors: each source is attached to one input table, each sink to one
output view. A connector belongs to the run (not the circuit version): its position
(Kafka offsets, files applied) and a sink's last tick are facts about one run's input
log and ticks, and a new run of the same version starts from nothing."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from .registry import is_source
from .secrets import unseal


class State(models.TextChoices):
    RUNNING = "running"
    RETRYING = "retrying"  # a transient error (broker away, lag full): tried again with backoff
    FAILED = "failed"  # a bad record or setting: stopped until the connector is restarted
    PAUSED = "paused"  # paused by itself (POST .../pause/): not polled or written; the API also says
    # "paused" for a running connector of a paused run


class OnError(models.TextChoices):
    """What a source does with a record that does not parse or does not fit the input."""

    FAIL = "fail"  # the connector fails, naming the record's position and column (the default)
    DEAD_LETTER = "dead_letter"  # the record goes to the connector's dead letters; the others go in


class Connector(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="connectors")
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=32)  # one of connectors/kinds.py
    node = models.CharField(max_length=64)  # the input table (source) or output view (sink)
    config = models.JSONField(default=dict)  # options; never a secret
    #: write-only options (passwords): option -> its value encrypted (connectors/secrets.py);
    #: never returned by the API. Read them with `opened_secrets()`.
    secrets = models.JSONField(default=dict)
    #: secret option -> the name of the environment variable holding it, read on the worker
    #: when the client opens (the editor's and SQL's way: a document never holds a secret)
    secrets_env = models.JSONField(default=dict)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # progress, written in the same transaction as what it counts
    position = models.JSONField(default=dict)  # source: where it resumes (Kafka: partition -> next offset; files: done)
    records_in = models.BigIntegerField(default=0)  # source: records pushed
    last_tick = models.IntegerField(default=-1)  # sink: the last tick written
    records_out = models.BigIntegerField(default=0)  # sink: records written
    state = models.CharField(max_length=16, choices=State.choices, default=State.RUNNING)
    errors = models.BigIntegerField(default=0)  # failures and transient errors so far (a metric: /metrics)
    last_error = models.TextField(blank=True, default="")
    error_at = models.DateTimeField(null=True, blank=True)
    dead_letters = models.BigIntegerField(default=0)  # source: records sent to its dead letters (all, not only those kept)
    #: how far behind its target it is, as its client knows it (None: not knowable), in `lag_unit`:
    #: records, files or bytes; stored with the position (a sink's lag in ticks is read from its run)
    lag = models.BigIntegerField(null=True, blank=True)
    lag_unit = models.CharField(max_length=16, blank=True, default="")
    #: [[unix time, records_in or records_out], ...] over the last RATE_WINDOW seconds (and one
    #: before), written with the counter: rows/s is read from them (connectors/rates.py)
    rate_samples = models.JSONField(default=list)

    class Meta:
        ordering = ["run", "name"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="unique_run_connector")]

    @property
    def is_source(self) -> bool:
        return is_source(self.kind)

    def label(self) -> str:
        return f"connector {self.name!r} ({self.kind})"

    def opened_secrets(self) -> dict:
        """The stored secrets decrypted (a ConfigError naming one no key opens)."""
        return unseal(self.secrets)


class DeadLetter(models.Model):
    """A source's record that did not parse or did not fit its input (`on_error:
    dead_letter`), stored in the transaction that pushed the rest of its batch and moved
    the position past it: never twice, never lost. The last DEAD_LETTERS_KEPT of a
    connector are kept; `Connector.dead_letters` counts them all."""

    connector = models.ForeignKey(Connector, on_delete=models.CASCADE, related_name="dead_letter_set")
    position = models.TextField()  # the record's position in its source (file:line, partition@offset, ...)
    column = models.CharField(max_length=256, blank=True, default="")
    message = models.TextField()
    payload = models.TextField(blank=True, default="")  # the raw record, cut at PAYLOAD_MAX characters
    created_at = models.DateTimeField(auto_now_add=True)

    PAYLOAD_MAX = 4096

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["connector", "-id"], name="dead_letter_latest")]
