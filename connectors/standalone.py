"""A circuit's declared connectors run without the server: `python -m dbsp run VIEWS.sql`
(docs/connectors.md, "Without the server: the command line"). No database, Celery,
Redis or Django: the server's connector clients (registry.py, opened with the schema
from the plan), the command line's input checks (dbsp/inputs.py) and the engine's
runtime, and a state folder for exactly once across restarts.

One tick: every source polled once (up to its `max_batch` records); their records
checked as the command line checks a pushes file (a bad one fails its connector: exit 1
with one line naming it, the record's position and the column; nothing is stored); the
tick run; then committed: its pushes appended to `pushes.jsonl` (fsynced), then
`state.json` -- the tick, every source's position after it, every sink's last tick --
replaced whole (a temporary file fsynced, then renamed). `state.json` is the commit
point: a log line past its tick never committed and is cut off on restart. Then the
tick's view deltas go to the sinks (idempotent by tick: a sink skips the ticks its target
holds, `committed_tick`), and `state.json` records them.

A restart replays the logged ticks through a fresh engine (its state rebuilt; nothing
printed), reopens the sources at their stored positions and gives each sink the ticks it
lacks: no record is pushed twice or lost, no tick written twice.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from dbsp.connector_specs import declared_in
from dbsp.errors import DataInvalid, TickFailed
from dbsp.inputs import InputTable, checks_deletes
from dbsp.runtime import changes_and_items

from . import formats
from .errors import ConfigError, RecordError, Transient, bare
from .kinds import Opening, secrets_of
from .registry import hand_kinds_to_the_engine, spec

__all__ = ["hand_kinds_to_the_engine", "run", "Options", "default_state"]

DEFAULT_BATCH = 10_000
#: between rounds that moved nothing, and the cap of the backoff after a transient error (seconds)
IDLE_WAIT, BACKOFF_FIRST, BACKOFF_CAP = 0.2, 0.5, 10.0


def default_state(circuit_path: str) -> Path:
    """`.dbsp-state/<the circuit file's name without its suffix>`, under the current folder."""
    return Path(".dbsp-state") / Path(circuit_path).stem


@dataclass
class Options:
    source_file: str  # the circuit's file, named in messages
    state: Path
    until_idle: bool = False
    stats: bool = False


class Failed(Exception):
    """Stops the run with exit status 1; the message is printed as it is."""


@dataclass
class Connected:
    """One declared connector and its open client."""

    name: str
    kind: str
    node: str
    config: dict
    secrets_env: dict
    source: bool
    client: object = None
    empty_polls: int = 0
    retry_at: float = 0.0
    backoff: float = 0.0
    last_tick: int = -1  # a sink's

    def label(self) -> str:
        return f"connector {self.name!r} ({self.kind})"  # as the server names it (connectors/models.py)


class StateFolder:
    """`state.json` (the commit point) and `pushes.jsonl` (each committed tick's pushes),
    held by one process at a time (a lock file)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._lock = open(path / "lock", "w")
        except OSError as e:
            raise Failed(f"cannot use the state folder {path}: {e}") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Failed(f"the state folder {path} is in use by another run of the command line") from None
        self.log = path / "pushes.jsonl"

    def load(self) -> dict | None:
        try:
            return json.loads((self.path / "state.json").read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise Failed(f"cannot read {self.path / 'state.json'}: {e}") from None

    def save(self, state: dict) -> None:
        final, temp = self.path / "state.json", self.path / f".state.json.{os.getpid()}.tmp"
        with open(temp, "w") as out:
            json.dump(state, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, final)
        _fsync_folder(self.path)

    def committed_ticks(self, last: int) -> list[tuple[int, dict]]:
        """The logged ticks up to `last`, in order; the log cut after them (what follows
        never committed: a crash between the log's append and state.json's rename)."""
        out, keep = [], 0
        try:
            with open(self.log, "rb") as f:
                for line in f:
                    if not line.endswith(b"\n"):
                        break  # a torn last line
                    entry = json.loads(line)
                    if entry["tick"] > last:
                        break
                    out.append((entry["tick"], entry["pushes"]))
                    keep += len(line)
        except FileNotFoundError:
            pass
        if self.log.exists() and self.log.stat().st_size != keep:
            os.truncate(self.log, keep)
        if (out[-1][0] if out else -1) != last:
            raise Failed(f"{self.log} lacks ticks up to {last} that {self.path / 'state.json'} says were committed")
        return out

    def append(self, tick: int, pushes: dict) -> None:
        with open(self.log, "ab") as out:
            out.write(json.dumps({"tick": tick, "pushes": pushes}, separators=(",", ":")).encode() + b"\n")
            out.flush()
            os.fsync(out.fileno())

    def close(self) -> None:
        self._lock.close()


def _fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fingerprint(document: dict) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


@dataclass
class Runner:
    document: dict
    plan: object
    runtime: object
    verifier: object
    options: Options
    out: object = field(default=sys.stdout)
    err: object = field(default=sys.stderr)

    def __post_init__(self):
        self.tables = {name: InputTable(name, schema, checks_deletes(self.plan, name))
                       for name, schema in self.plan.inputs.items()}
        self.connected = [Connected(entry["name"], entry["kind"], node, entry.get("config") or {},
                                    entry.get("secrets_env") or {}, node in self.plan.inputs)
                          for node, entry in declared_in(self.document)]
        self.sources = [c for c in self.connected if c.source]
        self.sinks = [c for c in self.connected if not c.source]
        # one scope per state folder: a Kafka sink's transactional id, a consumer group, a slot
        self.scope = "cli-" + hashlib.sha256(str(self.options.state.resolve()).encode()).hexdigest()[:10]
        self.tick = -1
        self.positions: dict[str, dict] = {}
        self.pending: dict[int, dict] = {}  # tick -> outputs, until every sink has it
        self.stopping = False

    # -- the state folder ---------------------------------------------------------------

    def _state(self) -> dict:
        return {"circuit": fingerprint(self.document), "tick": self.tick, "positions": self.positions,
                "sinks": {c.name: c.last_tick for c in self.sinks}}

    def _resume(self) -> None:
        state = self.folder.load()
        if state is None:
            return
        if state.get("circuit") != fingerprint(self.document):
            raise Failed(f"{self.options.state} holds the state of another circuit (or another version of "
                         f"{self.options.source_file}): give another --state, or delete it to start over")
        self.positions = dict(state["positions"])
        for sink in self.sinks:
            sink.last_tick = state["sinks"].get(sink.name, -1)
        for c in self.sinks:  # its target may hold more than state.json recorded (a crash after the write)
            self._open(c)
        behind = min((c.last_tick for c in self.sinks), default=state["tick"])
        for tick, pushes in self.folder.committed_ticks(state["tick"]):
            try:
                changes = self._changes({name: (records, []) for name, records in pushes.items()})
                result = self.runtime.step(changes)
            except (DataInvalid, TickFailed, RecordError) as e:
                raise Failed(f"{self.folder.log}: tick {tick} does not replay: {e}") from None
            if result.tick != tick:
                raise Failed(f"{self.folder.log}: tick {tick} replayed as tick {result.tick}")
            outputs = result.outputs_json()
            if self.verifier is not None:
                self.verifier.step(changes, outputs)
            if tick > behind:
                self.pending[tick] = outputs
        self.tick = state["tick"]
        print(f"{self.options.source_file}: resumed after tick {self.tick} from {self.options.state}",
              file=self.err, flush=True)

    # -- connectors ---------------------------------------------------------------------

    def _open(self, c: Connected) -> bool:
        """Its client, opened when needed; False while a transient trouble waits out its backoff."""
        if c.client is not None:
            return True
        if time.monotonic() < c.retry_at:
            return False
        schema = (self.plan.inputs if c.source else self.plan.views)[c.node]
        opening = Opening(0, c.name, c.node, c.config, secrets_of({}, c.secrets_env, "in this shell"),
                          dict(self.positions.get(c.name) or {}), schema, self.scope)
        try:
            c.client = spec(c.kind).open(opening)
        except Transient as e:
            self._wait(c, e)
            return False
        except ConfigError as e:
            raise Failed(f"{c.label()}: {e}") from None
        if c.source:
            self.positions[c.name] = c.client.position()  # a start (earliest, latest) made concrete
        else:
            c.last_tick = max(c.last_tick, c.client.committed_tick)
        return True

    def _wait(self, c: Connected, error: Exception) -> None:
        c.backoff = min(BACKOFF_CAP, c.backoff * 2 or BACKOFF_FIRST)
        c.retry_at = time.monotonic() + c.backoff
        print(f"{c.label()}: {error} (trying again in {c.backoff:g}s)", file=self.err, flush=True)
        self._close(c)

    def _close(self, c: Connected) -> None:
        if c.client is not None:
            try:
                c.client.close()
            except Exception:  # noqa: BLE001 - closing a client that failed
                pass
            c.client = None

    def _poll(self, c: Connected, batch: dict, afters: dict) -> bool:
        """One poll of a source into the tick's batch; True when it is idle (nothing new)."""
        if not self._open(c):
            return False
        schema = self.plan.inputs[c.node]
        fmt = c.config.get("format") or next(iter(spec(c.kind).formats), "insert_delete")
        columns = c.config.get("columns")

        def decode(position, payload):
            try:
                return formats.decode(fmt, payload, schema, columns)
            except formats.FormatError as e:
                raise RecordError(c.label(), position, str(e), e.field) from None

        try:
            items, after = c.client.poll(int(c.config.get("max_batch", DEFAULT_BATCH)), decode, schema)
        except Transient as e:
            self._wait(c, e)
            return False
        except RecordError as e:
            raise Failed(str(e.named(c.label()))) from None
        except ConfigError as e:
            raise Failed(f"{c.label()}: {e}") from None
        c.backoff = 0.0
        afters[c.name] = after
        records, owners = batch.setdefault(c.node, ([], []))
        for position, rs in items:
            records.extend(rs)
            owners.extend((c, position) for _ in rs)
        if items:
            c.empty_polls = 0
            return False
        c.empty_polls += 1
        drained = getattr(c.client, "drained", None)
        return drained() if drained is not None else c.empty_polls >= 2

    def _changes(self, batch: dict) -> dict:
        """The inputs' changes of a batch, checked as a pushes file's are; DataInvalid and
        the records' RecordError name the connector, the position and the column."""
        changes = {}
        for name, (records, owners) in batch.items():
            try:
                changes[name], items = changes_and_items(records, self.plan.inputs[name], self.plan.primary_key(name))
                self.tables[name].check(items)
            except DataInvalid as e:
                if not owners:
                    raise
                raise _named(e, owners) from None
        for name, change in changes.items():
            if self.tables[name].checked:
                self.tables[name].apply(change)
        return changes

    def _write_sinks(self) -> bool:
        """Each sink given the ticks it lacks; True when every sink has the last tick."""
        moved = False
        for c in self.sinks:
            if c.last_tick >= self.tick or not self._open(c):
                continue
            for tick in sorted(t for t in self.pending if t > c.last_tick):
                rows = [(rec["data"], rec["weight"]) for rec in self.pending[tick].get(c.node, [])]
                try:
                    if rows:
                        c.client.write(tick, rows)
                except Transient as e:
                    self._wait(c, e)
                    break
                c.last_tick, moved = tick, True
        if moved:
            self.folder.save(self._state())
        low = min((c.last_tick for c in self.sinks), default=self.tick)
        for tick in [t for t in self.pending if t <= low]:
            del self.pending[tick]
        return low >= self.tick

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> int:
        self.folder = StateFolder(self.options.state)
        try:
            self._resume()
            return self._loop()
        finally:
            for c in self.connected:
                self._close(c)
            self.folder.close()

    def _loop(self) -> int:
        while not self.stopping:
            batch, afters = {}, {}
            idle = [self._poll(c, batch, afters) for c in self.sources]
            if any(records for records, _ in batch.values()):
                code = self._tick(batch, afters)
                if code:
                    return code
            elif any(afters.get(c.name) not in (None, self.positions.get(c.name)) for c in self.sources):
                self.positions.update(afters)  # e.g. an empty file: applied, nothing to push
                self.folder.save(self._state())
                self._advanced(afters)
            caught_up = self._write_sinks()
            if self.options.until_idle and all(idle) and caught_up:
                print(f"{self.options.source_file}: every source drained at tick {self.tick}", file=self.err, flush=True)
                return 0
            if not any(records for records, _ in batch.values()):
                time.sleep(IDLE_WAIT)
        print(f"{self.options.source_file}: stopped after tick {self.tick}; it resumes from {self.options.state}",
              file=self.err, flush=True)
        return 0

    def _tick(self, batch: dict, afters: dict) -> int:
        changes = self._changes(batch)
        try:
            result = self.runtime.step(changes)
        except TickFailed as e:
            raise Failed(f"{self.options.source_file}: tick {self.runtime.tick}: {e}") from None
        self.folder.append(result.tick, {name: records for name, (records, _) in batch.items() if records})
        self.tick = result.tick
        self.positions.update(afters)
        self.folder.save(self._state())  # committed
        self._advanced(afters)
        outputs = result.outputs_json()
        if self.sinks:
            self.pending[result.tick] = outputs
        record = {"tick": result.tick, "outputs": outputs}
        if self.options.stats:
            record |= {"frontier": result.frontier, "stats": result.stats, "ms": result.ms}
        print(json.dumps(record), file=self.out, flush=True)
        if self.verifier is not None:
            differences = self.verifier.step(changes, outputs)
            if differences:
                print(json.dumps({"tick": result.tick, "verified": False, "differences": differences}), file=self.out,
                      flush=True)
                print(f"{self.options.source_file}: tick {result.tick}: the incremental outputs differ from the "
                      f"reference recomputation in {', '.join(sorted(differences))}", file=self.err)
                return 3
        return 0

    def _advanced(self, afters: dict) -> None:
        for c in self.sources:
            if c.name in afters and c.client is not None:
                c.client.advanced(afters[c.name])


def _named(error: DataInvalid, owners: list) -> Failed:
    """A refused batch as its first bad record's connector, position and column."""
    problem = next((p for p in error.problems if isinstance(p.row, int) and 0 <= p.row < len(owners)), None)
    if problem is None:
        c, position = owners[0]
        return Failed(str(RecordError(c.label(), position, str(error))))
    c, position = owners[problem.row]
    return Failed(str(RecordError(c.label(), position, bare(problem.message), problem.field)))


def run(document: dict, plan, runtime, verifier, options: Options) -> int:
    """Runs the circuit's connectors until every source is drained (--until-idle) or a
    signal (Ctrl-C, SIGTERM: the round under way finishes, then a clean stop); the exit status."""
    runner = Runner(document, plan, runtime, verifier, options)
    if not runner.sources and not options.until_idle:
        print(f"{options.source_file}: no source is declared: nothing to run (give a pushes file)", file=sys.stderr)
        return 2
    previous = {}

    def stop(signum, frame):
        runner.stopping = True
        for sig, handler in previous.items():  # a second signal stops at once
            signal.signal(sig, handler)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, stop)
    try:
        return runner.run()
    except Failed as e:
        print(str(e), file=sys.stderr, flush=True)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
