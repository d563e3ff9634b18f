"""`manage.py run_workers`: several Celery worker processes, kept running.

Each worker is a solo-pool Celery process with a Spark session of its own (the py4j
gateway is not fork-safe, so one tick at a time per process): with N of them a run's
long tick holds up only the runs that same process holds, and runs spread over the
workers through the shared queue and their leases (workers/leases.py). A worker that
exits (a crash, kill -9, the watchdog ending a stuck tick: workers/watchdog.py) is
started again after a backoff (1 s, doubling up to 30 s while it keeps dying within a
minute of starting); the others, and the web server, stay up. A worker whose heartbeat
stopped (frozen where not even its watchdog thread runs) is killed and restarted too.
SIGTERM / SIGINT stop every worker (each finishes its tick in progress), then this command.

With --verify it runs the verification queue's workers instead (DBSPWEB_VERIFY_WORKERS
of them, verify-worker-<i>.log): explanations, inspections and verifications, no ticks,
no Spark warm-up. With the operators' lane on (workers/lanes.py) the first consumes only
the owners' and operators' queue and the others both queues.

    python manage.py run_workers [--verify] [--count N] [--log-dir DIR] [-- extra celery worker args]
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone

from workers import lanes

#: A worker that ran at least this long before it exited is restarted at once.
STEADY_S = 60.0
BACKOFF_MAX_S = 30.0


def celery_command(loglevel: str = "INFO", extra=(), queues: list[str] | None = None) -> list[str]:
    """One worker: solo pool (the py4j gateway to the JVM is not fork-safe), the shared
    queue (or `queues`)."""
    return ["celery", "-A", "dbspweb", "worker", "--pool=solo", f"--loglevel={loglevel}",
            "-Q", ",".join(queues or [settings.CELERY_TASK_DEFAULT_QUEUE]), *extra]


class Slot:
    def __init__(self, index: int):
        self.index = index
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.next_start = 0.0
        self.failures = 0


class Command(BaseCommand):
    help = "Run DBSPWEB_WORKERS Celery workers (solo pool, one Spark session each) and restart any that exits."

    def add_arguments(self, parser):
        parser.add_argument("--verify", action="store_true",
                            help="the verification queue's workers (explain, inspect, verify; the operators' lane)")
        parser.add_argument("--count", type=int, default=None,
                            help="worker processes (DBSPWEB_WORKERS; with --verify DBSPWEB_VERIFY_WORKERS)")
        parser.add_argument("--log-dir", default="", help="write worker-<i>.log there (default: this command's output)")
        parser.add_argument("--name", default=None, help="node name prefix: workers are <name><i>@<host> (w; verify)")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("celery_args", nargs="*", help="more `celery worker` arguments (after --)")

    def handle(self, *args, verify, count, log_dir, name, loglevel, celery_args, **options):
        if count is None:
            count = settings.VERIFY_WORKERS if verify else settings.WORKERS
        if count < 1:
            raise SystemExit("run_workers: --count must be at least 1")
        name = name or ("verify" if verify else "w")
        self.stopping = False
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        slots = [Slot(i) for i in range(1, count + 1)]
        queues = {s.index: lanes.worker_queues(s.index, count) if verify else [settings.CELERY_TASK_DEFAULT_QUEUE]
                  for s in slots}
        # the verification workers recompute in batch jobs: no ticks over Spark-held state to warm
        env = {**os.environ, "DBSPWEB_SPARK_WARM_UP_TICKS": "0"} if verify else None
        log_name = "verify-worker" if verify else "worker"
        self.say(f"event=workers_starting count={count} queue={settings.VERIFY_QUEUE if verify else settings.CELERY_TASK_DEFAULT_QUEUE}")
        for slot in slots:
            self.say(f"event=worker_queues slot={slot.index} queues={','.join(queues[slot.index])}")
        next_check = time.monotonic() + 5.0
        while not self.stopping:
            now = time.monotonic()
            for slot in slots:
                if slot.proc is not None and slot.proc.poll() is not None:
                    ran = now - slot.started
                    slot.failures = 0 if ran >= STEADY_S else slot.failures + 1
                    delay = 0.0 if slot.failures == 0 else min(BACKOFF_MAX_S, 2.0 ** (slot.failures - 1))
                    self.say(f"event=worker_exited slot={slot.index} pid={slot.proc.pid} status={slot.proc.returncode} "
                             f"ran_s={ran:.1f} restart_in_s={delay:g}")
                    slot.proc, slot.next_start = None, now + delay
                if slot.proc is None and now >= slot.next_start:
                    out = open(Path(log_dir) / f"{log_name}-{slot.index}.log", "a") if log_dir else None
                    command = [sys.executable, "-m", *celery_command(loglevel, celery_args, queues[slot.index])]
                    slot.proc = subprocess.Popen([*command, "-n", f"{name}{slot.index}@%h"], stdout=out, env=env,
                                                 stderr=subprocess.STDOUT if out else None)
                    if out:
                        out.close()
                    slot.started = now
                    self.say(f"event=worker_started slot={slot.index} pid={slot.proc.pid}")
            if now >= next_check:
                self._kill_frozen(slots, name)
                next_check = now + 2.0
            time.sleep(0.5)
        self._shutdown(slots)

    def _kill_frozen(self, slots, name: str) -> None:
        """SIGKILL a worker whose heartbeat stopped (WorkerHeartbeat older than twice the
        lease TTL): a process frozen where not even the watchdog thread runs (native
        code holding the GIL, SIGSTOP) would otherwise keep its slot forever. Its runs
        move once their leases expire; the exit is then handled like any other."""
        from django.db import close_old_connections

        from workers.models import WorkerHeartbeat

        stale_before = timezone.now() - timedelta(seconds=max(2 * settings.LEASE_TTL, 10.0))
        try:
            close_old_connections()
            stale = set(WorkerHeartbeat.objects.filter(last_seen__lt=stale_before).values_list("worker", flat=True))
        except Exception:  # noqa: BLE001 - the database is away: nothing to judge by
            return
        for slot in slots:
            if slot.proc is None or slot.proc.poll() is not None:
                continue
            if any(w.startswith(f"{name}{slot.index}@") and w.endswith(f":{slot.proc.pid}") for w in stale):
                self.say(f"event=worker_frozen slot={slot.index} pid={slot.proc.pid} (no heartbeat): killing it")
                slot.proc.kill()

    def _stop(self, signum, frame):
        self.stopping = True

    def _shutdown(self, slots):
        running = [s.proc for s in slots if s.proc is not None and s.proc.poll() is None]
        for proc in running:
            proc.terminate()  # Celery's warm shutdown: the tick in progress finishes
        deadline = time.monotonic() + 60
        for proc in running:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.say("event=workers_stopped")

    def say(self, line: str) -> None:
        self.stdout.write(f"[run_workers] {line}")
        self.stdout.flush()
