"""The tick loop both backends share, and what a tick produces.

A run starts from a plan; `step({input: change})` advances one tick t and returns the
output deltas per view (consolidated Z-sets), the frontier per node (the last complete
outer tick; later, inner iterations of fixed points) and stats per node.
Linear operators whose inputs are all empty are skipped: no work, no Spark job.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.compute as pc

from . import limits
from .errors import DataInvalid, TickFailed
from .numeric import COMPUTING_KINDS, ValueOutOfRange, check_rows, check_table, is_overflow, node_label
from .plan import Plan
from .types import ARRAY_TYPES, BIGINT_MAX, BIGINT_MIN, Schema, coerce_row, decode_list, encode_list, raise_if, row_to_dict
from .zset import ZSet


class TickResult:
    """What one tick produced. `outputs` (view -> consolidated ZSet) is built on first
    use; `outputs_json()` renders straight from the backend's rows when it can."""

    def __init__(self, tick, raw, schemas, runtime, frontier=None, stats=None, ms=0.0):
        self.tick = tick
        self.schemas = schemas
        self.frontier = frontier or {}
        self.stats = stats or {}
        self.ms = ms
        self._raw, self._runtime = raw, runtime
        self._outputs: dict[str, ZSet] | None = None

    @property
    def outputs(self) -> dict[str, ZSet]:
        if self._outputs is None:
            self._outputs = {view: self._runtime.collect(value) for view, value in self._raw.items()}
        return self._outputs

    def outputs_arrow(self) -> dict[str, pa.Table | None]:
        """view -> its change on the driver as an Arrow table (the columns and `__w`),
        straight from the backend's table, without Python rows; None for an empty change
        or one the backend holds as Python rows (the reference evaluator: use `outputs`)."""
        return {view: (_arrow_table(value) if value is not None else None) for view, value in self._raw.items()}

    def outputs_json(self) -> dict[str, list[dict]]:
        """view -> [{"data": {...}, "weight": w}], in a stable order: by each column in
        turn (NULLs last; lists by their canonical JSON text), then the weight. A change
        held as an Arrow table is sorted by Arrow before it is rendered; Z-sets by Python
        with the same order."""
        out = {}
        for view, value in self._raw.items():
            schema = self.schemas[view]
            table = _arrow_table(value) if self._outputs is None else None
            if table is not None:
                out[view] = _table_json(_sorted(table, schema) if table.num_rows <= SORTED_MAX_ROWS else table, schema)
                continue
            rows = self._runtime.rows_json(value, schema) if self._outputs is None else None
            if rows is None:
                rows = [{"data": row_to_dict(r, schema), "weight": w} for r, w in self.outputs[view]]
            if len(rows) <= SORTED_MAX_ROWS:  # a stable order for people; big changes as computed
                rows.sort(key=_row_order)
            out[view] = rows
        return out


#: outputs_json sorts a view's change when it has at most this many rows
SORTED_MAX_ROWS = 20_000
_WEIGHT = "__w"  # an Arrow change's weight column (dbsp/arrow_change.py)


def _row_order(record: dict):
    return [(v is None, type(v).__name__, _orderable(v)) for v in record["data"].values()], record["weight"]


def _orderable(v):
    """A JSON value as something that sorts against its kind (lists may hold NULLs)."""
    if v is None:
        return 0
    return encode_list(v) if isinstance(v, list) else v


def _arrow_table(value):
    """A backend value's rows as an Arrow table (columns + `__w`) when it holds one."""
    table = getattr(value, "table", None)
    if not callable(table):
        return None
    table = table()
    return table if isinstance(table, pa.Table) and _WEIGHT in table.column_names else None


def _sorted(table, schema: Schema):
    """The rows in _row_order's order, by Arrow: column by column ascending, NULLs last
    (strings compare as UTF-8 bytes, that is by code point, as Python compares them)."""
    if table.num_rows < 2:
        return table
    keys = [(name, "ascending", "at_end") for name in schema.names] + [(_WEIGHT, "ascending", "at_end")]
    return table.take(pc.sort_indices(table, sort_keys=keys))


def _table_json(table, schema: Schema) -> list[dict]:
    names = schema.names
    if not any(c.type in ARRAY_TYPES or c.type in ("date", "timestamp") for c in schema.columns):
        # Arrow makes each row's dict itself (3x faster than zipping Python columns)
        rows = table.select(names).to_pylist()
        return [{"data": data, "weight": w} for data, w in zip(rows, table[_WEIGHT].to_pylist())]
    columns = []
    for c in schema.columns:
        values = table[c.name].to_pylist()
        if c.type in ARRAY_TYPES:
            values = [None if v is None else list(decode_list(v)) for v in values]
        elif c.type in ("date", "timestamp"):
            values = [None if v is None else v.isoformat() for v in values]
        columns.append(values)
    return [{"data": dict(zip(names, values)), "weight": w} for *values, w in zip(*columns, table[_WEIGHT].to_pylist())]


def changes_from_records(records: list, schema: Schema, primary_key: list[str] | None = None) -> ZSet:
    """Change records (Feldera's JSON formats) -> a Z-set; DataInvalid names each bad row.

    Accepted per record: {"insert": {...}}, {"delete": {...}}, {"weight": w, "data": {...}}.
    For a table with a `primary_key`, the records apply in order: the result holds the
    last record of each key (see dbsp/upsert.py).
    """
    return changes_and_items(records, schema, primary_key)[0]


def changes_and_items(records: list, schema: Schema, primary_key: list[str] | None = None) -> tuple[ZSet, list]:
    """changes_from_records, and the records as (row, weight) items: item i is record i
    (for a keyed table: the last record of each key, in push order)."""
    problems, items = [], []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            problems.append(_row_problem(i, "expected an object like {\"insert\": {...}}"))
            continue
        keys = set(rec)
        if keys == {"insert"}:
            data, weight = rec["insert"], 1
        elif keys == {"delete"}:
            data, weight = rec["delete"], -1
        elif keys == {"weight", "data"}:
            data, weight = rec["data"], rec["weight"]
            if isinstance(weight, bool) or not isinstance(weight, int) or weight == 0:
                problems.append(_row_problem(i, f"weight must be a nonzero integer, got {weight!r}", field="weight"))
                continue
            if not BIGINT_MIN <= weight <= BIGINT_MAX:  # weights are int64 in the engine (Arrow)
                problems.append(_row_problem(i, f"weight {weight} does not fit in a signed 64-bit integer", field="weight"))
                continue
            if primary_key and weight not in (1, -1):  # reported with the other problems (dbsp/upsert.py)
                problems.append(_row_problem(
                    i, f"weight {weight} on a table with a primary key (a record inserts or deletes one row)", field="weight"))
                continue
        else:
            problems.append(_row_problem(i, f"expected one of {{\"insert\": row}}, {{\"delete\": row}}, {{\"weight\": w, \"data\": row}}; got keys {sorted(keys)}"))
            continue
        row, found = coerce_row(data, schema, i)
        problems.extend(found)
        if row is not None:
            items.append((row, weight))
    raise_if(problems)
    if primary_key:  # (every record made an item, so item i is record i)
        from .upsert import last_per_key

        items = last_per_key(items, [schema.names.index(k) for k in primary_key])
    z = ZSet(items)
    overflow = {row for row, w in z if not BIGINT_MIN <= w <= BIGINT_MAX}
    if overflow:  # records of one row whose weights sum beyond int64 (unkeyed: item i is record i)
        raise_if([_row_problem(i, f"the weights of this row's records sum to {z.weight(row)}, which does not fit "
                                  "in a signed 64-bit integer", field="weight")
                  for i, (row, _) in enumerate(items) if row in overflow])
    return z, items


def _row_problem(i, message, field=None):
    from .errors import Problem

    return Problem(f"row {i}: {message}", row=i, field=field)


@contextmanager
def _naming(node_id: str, kind: str):
    """Any failure inside becomes a TickFailed naming the node and its operator
    (rejected input data, DataInvalid, already names its input and row)."""
    try:
        yield
    except (TickFailed, DataInvalid):
        raise
    except Exception as e:
        raise TickFailed(node_id, kind, e) from e


class Runtime(ABC):
    """Evaluates a plan tick by tick; a backend says how each node is executed.

    A tick: every z^-1 first emits what it absorbed last tick; then nodes run in
    topological order (edges into z^-1 excluded, which is what makes cycles through
    a delay causal); finally every z^-1 absorbs its input for the next tick.
    """

    #: rows one node may build in one tick (dbsp.limits.TICK_MAX_ROWS; None: no limit)
    max_rows: int | None = limits.TICK_MAX_ROWS
    #: bytes one node may build in one tick (dbsp.limits.TICK_MAX_BYTES; None: no limit)
    max_bytes: int | None = limits.TICK_MAX_BYTES

    def __init__(self, plan: Plan):
        self.plan = plan
        self.tick = -1
        #: The node a tick is evaluating now (None between ticks): read by a watchdog on
        #: another thread to name the node of a tick that takes too long.
        self.node: str | None = None
        self.executors = {n: self.make_executor(n) for n in plan.order}

    @abstractmethod
    def make_executor(self, node_id: str):
        """An object with step(inputs) -> value (or emit()/absorb(value) for z^-1)."""

    @abstractmethod
    def from_zset(self, node_id: str, z: ZSet):
        """An input change in this backend's representation (None when empty)."""

    @abstractmethod
    def collect(self, value) -> ZSet:
        """A backend value -> a consolidated ZSet (observing an output)."""

    def state_rows(self, node_id: str) -> int:
        return 0

    def node_started(self, node_id: str) -> None:
        """Backend hook: a node's work for this tick begins (see node_finished)."""

    def node_finished(self, node_id: str, stats: dict) -> None:
        """Backend hook: add to a node's stats what the backend knows of its tick:
        `path` (where it ran: "row", "arrow", "spark", "skipped", or "reference") and
        `spark_jobs` (added to, since a node may finish in several parts)."""

    def rows_out(self, value) -> int:
        return len(self.collect(value))

    def rows_json(self, value, schema) -> list[dict] | None:
        """The rows of an output value as JSON records, or None to go through collect()."""
        return None

    def size(self, value) -> int | None:
        """Rows in a value when known without work (None: not observed yet)."""
        if value is None:
            return 0
        return len(value) if isinstance(value, ZSet) else None

    def nbytes(self, value) -> int | None:
        """Bytes a value holds when measured without work (an Arrow table's); None:
        counted from its rows and schema (limits.row_bytes)."""
        return None

    def step(self, changes: dict[str, ZSet], observe=None) -> TickResult:
        """Advance one tick. `observe(node_id, value)`, when given, is called with every
        node's value as it is computed (delays with what they emit; a fixed point's
        exports under their ids; backend values: `collect()` turns one into a ZSet).
        Inner nodes of fixed points are observed by backends that support it (the
        reference evaluator: `observe(inner_id, value, iteration=k)`).

        No node may build more than `max_rows` rows or `max_bytes` bytes (TickTooLarge,
        naming it): joins and products are estimated from their keys before they are
        built, every node's output is counted after (its bytes: `nbytes`, or rows × the
        schema's row width)."""
        with limits.tick_rows(self.max_rows, self.max_bytes):
            return self._step(changes, observe)

    def _step(self, changes: dict[str, ZSet], observe=None) -> TickResult:
        unknown = set(changes) - set(self.plan.inputs)
        if unknown:
            raise KeyError(f"no input named {', '.join(sorted(unknown))}")
        started = time.perf_counter()
        self.tick += 1
        plan, values, stats = self.plan, {}, {}
        frontier = {node_id: {"tick": self.tick} for node_id in plan.order}
        delays = [n for n in plan.order if plan.operators[n].breaks_cycles]
        for n in delays:
            self.node_started(n)
            with _naming(n, "delay"):
                values[n] = self.executors[n].emit()
            stats[n] = {}
            self.node_finished(n, stats[n])
            if observe is not None:
                observe(n, values[n])
        for node_id in plan.order:
            op = plan.operators[node_id]
            if op.breaks_cycles:
                continue
            t0 = time.perf_counter()
            self.node = node_id
            self.node_started(node_id)
            if op.kind == "input":
                z = changes.get(node_id)
                size = 0 if z is None else (z.num_rows if hasattr(z, "num_rows") else len(z))
                inputs = {"in": self.from_zset(node_id, z) if size else None}
                stats[node_id] = {"rows_in": size}
            else:
                inputs = {port: values.get(src) for port, src in plan.sources(node_id).items()}
                sizes = [self.size(v) for v in inputs.values()]
                stats[node_id] = {"rows_in": sum(sizes)} if None not in sizes else {}
            executor = self.executors[node_id]
            with _naming(node_id, op.kind):
                try:
                    if observe is not None and op.kind == "fixedpoint" and getattr(executor, "observes_iterations", False):
                        result = executor.step(inputs, observe=observe)
                    else:
                        result = executor.step(inputs)
                except Exception as error:  # a library's overflow inside an operator: the numeric rule's error
                    if not isinstance(error, ValueOutOfRange) and is_overflow(error):
                        raise ValueOutOfRange(None, "a value is outside the bigint range (64 bits)") from error
                    raise
                inner = executor.progress(self.tick) if op.kind == "fixedpoint" else None
                if op.kind in COMPUTING_KINDS:  # a sum of 1.7e308s, a bigint past 64 bits: fail here, naming the node
                    self.check_numbers(node_id, op, result)
                for key, value in (result.items() if op.kind == "fixedpoint" else [(node_id, result)]):
                    if (built := self.size(value)) is not None:  # a flat map's, a union's, a fixed point's rows
                        limits.check_tick_rows(node_id, op.kind, built, built=True, schema=plan.schemas.get(key),
                                               nbytes=self.nbytes(value))
            if observe is not None:
                for key, value in (result.items() if op.kind == "fixedpoint" else [(node_id, result)]):
                    observe(key, value)
            if op.kind == "fixedpoint":  # several outputs, kept under their export ids
                values.update(result)
                frontier.update(inner["frontier"])
                for inner_id, inner_stats in inner["stats"].items():
                    stats[inner_id] = inner_stats
            else:
                values[node_id] = result
                if (size := self.size(result)) is not None and op.kind != "output":
                    stats[node_id]["rows_out"] = size
            self.node_finished(node_id, stats[node_id])
            stats[node_id]["ms"] = round((time.perf_counter() - t0) * 1000, 3)
        for n in delays:
            t0 = time.perf_counter()
            self.node_started(n)
            with _naming(n, "delay"):
                self.executors[n].absorb(values.get(plan.sources(n)["in"]))
            stats[n].update(rows_out=self.size(values[n]) or 0)
            self.node_finished(n, stats[n])
            stats[n]["ms"] = round((time.perf_counter() - t0) * 1000, 3)
        raw = {}
        for view in plan.views:
            t0 = time.perf_counter()
            self.node = view
            raw[view] = values[view]
            self.node_started(view)
            with _naming(view, "output"):
                stats[view]["rows_out"] = self.rows_out(values[view])
            self.node_finished(view, stats[view])
            stats[view]["ms"] = round(stats[view]["ms"] + (time.perf_counter() - t0) * 1000, 3)
        for node_id in plan.order:
            if rows := self.state_rows(node_id):
                stats.setdefault(node_id, {})["state_rows"] = rows
        self.node = None
        for node_id in plan.order:  # event-time progress (windows): waterline, late rows
            if hasattr(self.executors[node_id], "event_time_progress"):
                with _naming(node_id, plan.operators[node_id].kind):
                    more_frontier, more_stats = self.executors[node_id].event_time_progress()
                frontier[node_id].update(more_frontier)
                stats.setdefault(node_id, {}).update(more_stats)
        return TickResult(
            tick=self.tick,
            raw=raw,
            schemas=dict(plan.views),
            runtime=self,
            frontier=frontier,
            stats=stats,
            ms=round((time.perf_counter() - started) * 1000, 3),
        )

    def check_numbers(self, node_id: str, op, result) -> None:
        """Raise numeric.ValueOutOfRange when a value a node computed is out of range (a
        double not finite, a bigint beyond 64 bits), for values on the driver: a ZSet, or
        a change with its rows on the driver (a Spark DataFrame is checked by the
        expressions and aggregates compiled into it)."""
        values = result.items() if op.kind == "fixedpoint" else [(node_id, result)]
        for key, value in values:
            schema = self.plan.schemas.get(key)
            if value is None or schema is None:
                continue
            label = node_label(node_id, op.kind)
            if isinstance(value, ZSet):
                check_rows((row for row, _ in value), [c.type for c in schema.columns], label)
            elif getattr(value, "rows", None) is not None:
                check_table(value.table(), {c.name: c.type for c in schema.columns}, label)

    def snapshot(self, directory):
        """Write every executor's state and the tick reached into `directory`
        (see dbsp.snapshot); returns the file written."""
        from .snapshot import write

        return write(self, directory)

    @classmethod
    def restore(cls, plan: Plan, directory, **options) -> "Runtime":
        """A runtime of `plan` with the state of a snapshot: it continues at the tick
        after the one the snapshot was taken at. `options` go to the constructor."""
        from .snapshot import read_into

        runtime = cls(plan, **options)
        read_into(runtime, directory)
        return runtime

    def close(self) -> None:
        """Release backend state."""
