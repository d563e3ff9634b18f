"""Moving records: a run's sources pushed into its input log, its committed ticks written
to its sinks. Called by the run's lease holder (workers/pumps.py) with `fence`, which
raises unless that worker still holds the run's lease at the epoch it pumps under.

Exactly once:
- a source's batch is validated whole (the input log's one check), then logged in ONE
  database transaction together with the source's new position, fenced by the lease: a
  crash before the commit stores neither (the next holder reads the same records again
  from the stored position); after it, both (it resumes after them). No duplicate, no gap.
- with `on_error: dead_letter`, a batch's records that do not parse or fit go to the
  connector's dead letters in that same transaction (with the push of the rest and the
  position past them): a crash stores both or neither, so a dead letter is never lost or
  written twice. The source's lag (its client's `lag`, when it has one) and its rows/s
  samples are stored there too.
- a sink writes ticks after its `last_tick`; writing a tick again writes the same thing
  (a file replaced atomically; a Kafka sink first reads the last tick its topic holds).
"""
from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from circuits.services import ServiceError, plan_for
from runs import input_log
from runs.lag import lag_of
from runs.models import Run, TickOutput

from . import formats
from .errors import ConfigError, RecordError, Rejected, Transient, bare
from .kinds import Opening, secrets_of
from .models import Connector, DeadLetter, OnError, State
from .rates import sampled
from .registry import on_error, spec

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
    #: each sink writes on a thread of its own (the worker's pump): a slow or hanging target
    #: delays only its own output, and the step that finds its write done takes its outcome
    #: (records, or the error, handled as any step's). False: every step inline (tests).
    sinks_apart: bool = False
    writes: dict[int, Future] = field(default_factory=dict)
    threads: dict[int, ThreadPoolExecutor] = field(default_factory=dict)

    def pump_run(self, run: Run, epoch: int, fence) -> int:
        """One step of each of the run's connectors; returns the records moved."""
        moved = 0
        for connector in Connector.objects.filter(run=run):
            if connector.state in (State.FAILED, State.PAUSED):
                self.close(connector.pk)  # a paused one is not polled: its client lets go (a restart reopens it)
                self.waiting.pop(connector.pk, None)
                continue
            retry_at, backoff = self.waiting.get(connector.pk, (0.0, 0.0))
            if time.monotonic() < retry_at:
                continue
            try:
                if self.sinks_apart and not connector.is_source:
                    written = self._write_apart(run, connector, epoch, fence)
                    if written is None:
                        continue  # still writing (or just begun): the run's other connectors go on
                    moved += written
                else:
                    moved += self._step(run, connector, epoch, fence)
                if connector.pk in self.waiting or connector.state != State.RUNNING:
                    self.waiting.pop(connector.pk, None)
                    # (not over a pause asked for during the step)
                    Connector.objects.filter(pk=connector.pk, state=State.RETRYING).update(state=State.RUNNING)
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
                Connector.objects.filter(pk=connector.pk).exclude(state=State.PAUSED).update(
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

    def _write_apart(self, run, connector, epoch, fence) -> int | None:
        """The sink's write begun on its own thread, or its outcome once done: the records
        written, its error raised here; None while it runs."""
        future = self.writes.get(connector.pk)
        if future is None:
            thread = self.threads.get(connector.pk)
            if thread is None:
                thread = self.threads[connector.pk] = ThreadPoolExecutor(1, thread_name_prefix=f"dbspweb-sink-{connector.pk}")
            self.writes[connector.pk] = thread.submit(self._step_on_own_thread, run, connector, epoch, fence)
            return None
        if not future.done():
            return None
        del self.writes[connector.pk]
        return future.result()

    def _step_on_own_thread(self, run, connector, epoch, fence) -> int:
        try:
            return self._step(run, connector, epoch, fence)
        finally:
            connection.close()  # this thread's own database connection

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
        letters = DeadLetters(connector) if on_error(connector.config) == OnError.DEAD_LETTER else None

        def decode(position, payload):
            if letters is not None:
                letters.payloads[position] = payload
            try:
                return formats.decode(fmt, payload, schema, columns)
            except formats.FormatError as e:
                error = RecordError(connector.label(), position, str(e), e.field)
                if letters is None:
                    raise error from None
                return Rejected(error, payload)

        items, after = client.poll(limit, decode, schema)
        if isinstance(items, formats.Columns):  # typed columns: checked and logged without a dict a record
            checked = input_log.validate_columns(run, connector.node, items.arrays) if len(items) else None
            if checked is not None:
                checked.user_id = connector.created_by_id
                try:
                    self._log(run, connector, client, checked, after, fence, letters)
                    return checked.rows
                except ServiceError:
                    pass  # refused as a whole (not a 429): the record path below names the records
            items = items.records()
        if isinstance(items, formats.Batch):  # decoded at once, one record per message (none refused)
            rejected, records, owner = [], items.records, items.positions
        else:
            rejected = [records for _, records in items if isinstance(records, Rejected)]
            if rejected and letters is None:
                raise rejected[0].error.named(connector.label())  # a client's own Rejected, without dead letters
            records = [r for _, rs in items for r in rs]
            owner = [position for position, rs in items for _ in rs]
        if letters is not None:
            letters.add(rejected)
        while True:
            if not records:
                if after != client.position() or (letters and letters.found):  # e.g. an empty file: applied
                    self._log(run, connector, client, None, after, fence, letters=letters)
                elif (lag := _lag(client, after)) != _stored_lag(connector):
                    self._log_lag(connector, lag)
                return 0
            try:
                checked = input_log.validate(run, connector.node, records)
                checked.user_id = connector.created_by_id
                self._log(run, connector, client, checked, after, fence, letters)
                return len(records)
            except ServiceError as e:
                # A batch refused for some of its records: with dead letters, they go there and
                # the rest is checked (and logged) again; otherwise the connector fails on the first.
                bad = letters.refused(e, owner, records) if letters is not None else {}
                if not bad:
                    raise _named(connector, e, owner) from None
                kept = [i for i, position in enumerate(owner) if position not in bad]
                records, owner = [records[i] for i in kept], [owner[i] for i in kept]

    def _log(self, run, connector, client, checked, after, fence, letters=None) -> None:
        lag = _lag(client, after)
        rows = checked.rows if checked else 0
        with transaction.atomic():
            lock_and_fence(run.pk, fence)
            if checked is not None:
                [entry] = input_log.log_pushes(run, [checked])
                if isinstance(entry, ServiceError):
                    if entry.status == 429:
                        raise Transient(f"the run's lag is full: {entry.detail}")
                    raise entry  # the batch (what _pull does with it): this transaction stored nothing
            found = letters.store() if letters is not None else 0
            Connector.objects.filter(pk=connector.pk).update(
                position=after, records_in=F("records_in") + rows, dead_letters=F("dead_letters") + found,
                lag=lag[0] if lag else None, lag_unit=lag[1] if lag else "",
                **({"rate_samples": sampled(connector.rate_samples, time.time(), connector.records_in + rows,
                                            connector.records_in)} if rows else {}))
        client.advanced(after)
        connector.position, connector.records_in = after, connector.records_in + rows
        connector.lag, connector.lag_unit = (lag[0], lag[1]) if lag else (None, "")

    def _log_lag(self, connector, lag) -> None:
        """The lag alone, when it changed while nothing was read (rare: not a write a step)."""
        Connector.objects.filter(pk=connector.pk).update(lag=lag[0] if lag else None, lag_unit=lag[1] if lag else "")
        connector.lag, connector.lag_unit = (lag[0], lag[1]) if lag else (None, "")

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
            samples = {}
            if records:
                connector.rate_samples = sampled(connector.rate_samples, time.time(), connector.records_out + records,
                                                 connector.records_out)
                connector.records_out += records
                samples = {"rate_samples": connector.rate_samples}
            Connector.objects.filter(pk=connector.pk).update(last_tick=tick, records_out=F("records_out") + records,
                                                             **samples)
        if not outputs and last > connector.last_tick:
            Connector.objects.filter(pk=connector.pk, last_tick__lt=last).update(last_tick=last)
        return written

    def close(self, connector_id: int) -> None:
        self.writes.pop(connector_id, None)  # a write under way is left to end on its own thread
        thread = self.threads.pop(connector_id, None)
        if thread is not None:
            thread.shutdown(wait=False)
        live = self.live.pop(connector_id, None)
        if live is not None:
            try:
                live.client.close()
            except Exception:  # noqa: BLE001 - closing a client that failed
                log.exception("event=connector_close_failed connector=%s", connector_id)

    def close_all_but(self, keep: set[int]) -> None:
        for connector_id in {*list(self.live), *list(self.writes), *list(self.threads)} - keep:
            self.close(connector_id)


def _lag(client, position: dict) -> tuple[int, str] | None:
    """What the client says of how far `position` is behind its source's end (its optional
    `lag`, see kinds.py); None when it cannot say, or fails to (logged, never fatal)."""
    lag = getattr(client, "lag", None)
    if lag is None:
        return None
    try:
        found = lag(position)
    except Exception:  # noqa: BLE001 - a lag is a hint: the records still move
        log.warning("event=connector_lag_failed client=%s", type(client).__name__, exc_info=True)
        return None
    return (int(found[0]), str(found[1])) if found is not None else None


class DeadLetters:
    """A batch's bad records with `on_error: dead_letter`, stored by `_log` in the
    transaction of the batch's push and position (so exactly once)."""

    def __init__(self, connector: Connector):
        self.connector = connector
        self.payloads: dict[str, object] = {}  # position -> raw payload, as decode saw it
        self.found: list[tuple[RecordError, object]] = []  # (the error, the raw record)

    def add(self, rejected: list[Rejected]) -> None:
        self.found += [(r.error.named(self.connector.label()), r.payload) for r in rejected]

    def refused(self, error: ServiceError, owner: list[str], records: list) -> set[str]:
        """The positions of the records the input log refused, each a dead letter (its first
        problem); empty when it named no record (then the batch fails as without dead letters)."""
        bad: dict[str, RecordError] = {}
        for problem in error.errors or []:
            row = problem.get("row")
            if not isinstance(row, int) or not 0 <= row < len(owner):
                return set()
            position = owner[row]
            if position not in bad:
                bad[position] = RecordError(self.connector.label(), position, bare(problem["message"]), problem.get("field"))
        for position, found in bad.items():
            raw = self.payloads.get(position)
            if raw is None:  # a client that reads typed rows (no decode): its records, as JSON
                raw = [r for p, r in zip(owner, records) if p == position]
                raw = raw[0] if len(raw) == 1 else raw
            self.found.append((found, raw))
        return set(bad)

    def store(self) -> int:
        """Write them (call in the push's transaction): the last DEAD_LETTERS_KEPT are kept."""
        if not self.found:
            return 0
        DeadLetter.objects.bulk_create([
            DeadLetter(connector_id=self.connector.pk, position=e.position[:1000], column=(e.field or "")[:256],
                       message=e.message, payload=_payload_text(payload))
            for e, payload in self.found])
        kept = max(1, settings.DEAD_LETTERS_KEPT)
        oldest_kept = (DeadLetter.objects.filter(connector_id=self.connector.pk).order_by("-id")
                       .values_list("id", flat=True)[kept - 1:kept])
        for cutoff in oldest_kept:
            DeadLetter.objects.filter(connector_id=self.connector.pk, id__lt=cutoff).delete()
        return len(self.found)


def _stored_lag(connector: Connector) -> tuple[int, str] | None:
    return (connector.lag, connector.lag_unit) if connector.lag is not None else None


def _payload_text(payload) -> str:
    if payload is None:
        return ""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        text = bytes(payload[:DeadLetter.PAYLOAD_MAX * 4]).decode("utf-8", errors="replace")
    elif isinstance(payload, str):
        text = payload
    else:
        text = json.dumps(payload, default=str)
    return text[:DeadLetter.PAYLOAD_MAX]


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
                                             secrets_of(connector.opened_secrets(), connector.secrets_env),
                                             connector.position or {}))


def open_kind(kind: str, opening: Opening):
    return spec(kind).open(opening)
