"""Moving records: a run's sources pushed into its input log, its committed ticks written
to its sinks. Called by the run's lease holder (workers/pumps.py) with `fence`, which
raises unless that worker still holds the run's lease at the epoch it pumps under.

Exactly once:
- a source's batch is validated whole (the input log's one check), then logged in ONE
  database transaction together with the source's new position, fenced by the lease: a
  crash before the commit stores neither (the next holder reads the same records again
  from the stored position); after it, both (it resumes after them). No duplicate, no gap.
- a sink writes ticks after its `last_tick`; writing a tick again writes the same thing
  (a file replaced atomically; a Kafka sink first reads the last tick its topic holds).
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from circuits.services import ServiceError, plan_for
from runs import input_log
from runs.lag import lag_of
from runs.models import Run, TickOutput

from . import formats
from .errors import ConfigError, RecordError, Transient, bare
from .kinds import Opening
from .registry import spec
from .models import Connector, State

log = logging.getLogger("connectors.pump")
#: backoff after a transient error, doubling up to the cap (seconds)
BACKOFF_FIRST, BACKOFF_CAP = 0.5, 10.0
SINK_TICKS_PER_STEP = 50


@dataclass
class Live:
    """One connector's open client, under the lease epoch it was opened with."""

    epoch: int
    client: object


@dataclass
class Pump:
    """The open clients of the connectors of the runs one worker holds."""

    live: dict[int, Live] = field(default_factory=dict)
    waiting: dict[int, tuple[float, float]] = field(default_factory=dict)  # connector -> (retry at, backoff)

    def pump_run(self, run: Run, epoch: int, fence) -> int:
        """One step of each of the run's connectors; returns the records moved."""
        moved = 0
        for connector in Connector.objects.filter(run=run).exclude(state=State.FAILED):
            retry_at, backoff = self.waiting.get(connector.pk, (0.0, 0.0))
            if time.monotonic() < retry_at:
                continue
            try:
                moved += self._step(run, connector, epoch, fence)
                if connector.pk in self.waiting or connector.state != State.RUNNING:
                    self.waiting.pop(connector.pk, None)
                    Connector.objects.filter(pk=connector.pk).update(state=State.RUNNING)
            except (RecordError, ConfigError) as e:
                text = str(e.named(connector.label())) if isinstance(e, RecordError) else f"{connector.label()}: {e}"
                log.warning("event=connector_failed run=%s connector=%s error=%r", run.pk, connector.name, text)
                self.close(connector.pk)
                Connector.objects.filter(pk=connector.pk).update(state=State.FAILED, last_error=text, error_at=timezone.now(),
                                                                 errors=F("errors") + 1)
            except Transient as e:
                backoff = min(BACKOFF_CAP, backoff * 2 or BACKOFF_FIRST)
                self.waiting[connector.pk] = (time.monotonic() + backoff, backoff)
                self.close(connector.pk)
                Connector.objects.filter(pk=connector.pk).update(
                    state=State.RETRYING, last_error=f"{connector.label()}: {e}", error_at=timezone.now(),
                    errors=F("errors") + 1)
            except BaseException:
                # Anything else (the lease lost, the database away, a shutdown): what the client
                # read past its stored position was not committed, so it must be read again:
                # close it; the next step reopens it at the stored position.
                self.close(connector.pk)
                raise
        return moved

    def _client(self, run: Run, connector: Connector, epoch: int, fence):
        live = self.live.get(connector.pk)
        if live is not None and live.epoch == epoch:
            return live.client
        self.close(connector.pk)
        client = open_client(run, connector)
        self.live[connector.pk] = Live(epoch, client)
        if connector.is_source and client.position() != connector.position:
            # a start (Kafka's earliest/latest/stored, a snapshot's slot) made concrete, so a restart resumes there
            with transaction.atomic():
                lock_and_fence(run.pk, fence)
                Connector.objects.filter(pk=connector.pk).update(position=client.position())
            connector.position = client.position()
        return client

    def _step(self, run, connector, epoch, fence) -> int:
        client = self._client(run, connector, epoch, fence)
        if connector.is_source:
            return self._pull(run, connector, client, fence)
        return self._write(run, connector, client)

    def _pull(self, run: Run, connector: Connector, client, fence) -> int:
        if lag_of(run.pk)["pushes"] >= max(1, settings.MAX_PENDING_PUSHES // 2):
            return 0  # paced by the run's lag: let the ticks catch up
        schema = plan_for(run.version).inputs[connector.node]
        limit = min(settings.PUSH_MAX_ROWS, connector.config.get("max_batch", 10_000))
        fmt = connector.config.get("format") or next(iter(spec(connector.kind).formats), "insert_delete")
        columns = connector.config.get("columns")

        def decode(position, payload):
            try:
                return formats.decode(fmt, payload, schema, columns)
            except formats.FormatError as e:
                raise RecordError(connector.label(), position, str(e), e.field) from None

        items, after = client.poll(limit, decode, schema)
        if isinstance(items, formats.Batch):  # decoded at once, one record per message
            records, owner = items.records, items.positions
        else:
            records = [r for _, rs in items for r in rs]
            owner = [position for position, rs in items for _ in rs]
        if not records:
            if after != client.position():  # e.g. an empty file: applied, nothing to push
                self._log(run, connector, client, None, after, fence)
            return 0
        try:
            checked = input_log.validate(run, connector.node, records)
        except ServiceError as e:
            raise _named(connector, e, owner) from None
        checked.user_id = connector.created_by_id
        self._log(run, connector, client, checked, after, fence, owner)
        return len(records)

    def _log(self, run, connector, client, checked, after, fence, owner=()) -> None:
        with transaction.atomic():
            lock_and_fence(run.pk, fence)
            if checked is not None:
                [entry] = input_log.log_pushes(run, [checked])
                if isinstance(entry, ServiceError):
                    if entry.status == 429:
                        raise Transient(f"the run's lag is full: {entry.detail}")
                    raise _named(connector, entry, owner)
            Connector.objects.filter(pk=connector.pk).update(
                position=after, records_in=F("records_in") + (checked.rows if checked else 0))
        client.advanced(after)

    def _write(self, run: Run, connector: Connector, client) -> int:
        last = max(connector.last_tick, client.committed_tick)
        outputs = list(TickOutput.objects.filter(run=run, tick__gt=last).order_by("tick")
                       .values_list("tick", "deltas")[:SINK_TICKS_PER_STEP])
        written = 0
        for tick, deltas in outputs:
            rows = [(rec["data"], rec["weight"]) for rec in (deltas or {}).get(connector.node, [])]
            if rows:
                client.write(tick, rows)
            records = sum(abs(weight) for _, weight in rows)
            written += records
            Connector.objects.filter(pk=connector.pk).update(last_tick=tick, records_out=F("records_out") + records)
        if not outputs and last > connector.last_tick:
            Connector.objects.filter(pk=connector.pk, last_tick__lt=last).update(last_tick=last)
        return written

    def close(self, connector_id: int) -> None:
        live = self.live.pop(connector_id, None)
        if live is not None:
            try:
                live.client.close()
            except Exception:  # noqa: BLE001 - closing a client that failed
                log.exception("event=connector_close_failed connector=%s", connector_id)

    def close_all_but(self, keep: set[int]) -> None:
        for connector_id in [c for c in self.live if c not in keep]:
            self.close(connector_id)


def lock_and_fence(run_id: int, fence) -> None:
    """The run row first (the order every writer of a run takes), then the lease."""
    list(Run.objects.select_for_update().filter(pk=run_id).values_list("pk", flat=True))
    fence()


def _named(connector: Connector, error: ServiceError, owner: list[str]) -> RecordError:
    """The input log's refusal of a batch as the first bad record's position and column."""
    problem = next((p for p in error.errors if isinstance(p.get("row"), int)), None)
    if problem is None or not 0 <= problem["row"] < len(owner):
        return RecordError(connector.label(), owner[0] if owner else "?", error.detail)
    # the row number is the batch's, not the user's (the position says where); the column is named once
    message = bare(problem["message"])
    return RecordError(connector.label(), owner[problem["row"]], message, problem.get("field"))


def open_client(run: Run, connector: Connector):
    return open_kind(connector.kind, Opening(run.pk, connector.name, connector.node, connector.config or {},
                                             secrets_of(connector.secrets, connector.secrets_env), connector.position or {}))


def open_kind(kind: str, opening: Opening):
    return spec(kind).open(opening)


def secrets_of(stored: dict | None, from_env: dict | None) -> dict:
    """The stored secrets and those named as environment variables, read now (on the
    worker, when the client opens): a variable that is not set is a ConfigError naming it."""
    secrets = dict(stored or {})
    for option, variable in (from_env or {}).items():
        value = os.environ.get(variable)
        if value is None:
            raise ConfigError(f"secret {option!r}: the environment variable {variable} is not set on the worker")
        secrets[option] = value
    return secrets
