"""Executors for fixed points (dbsp/operators/fixedpoint.py has the math).

`FixedPointDelta` is the incremental form over nested time for relational bodies. At
outer tick t it runs iterations k = 0, 1, ... where each inner node receives ΔV[k], the
change this tick makes to its inputs' values at iteration k, and answers with the
change to its own value at k, using its ordinary outer-Δ executor (join, distinct,
aggregate, ...) — one executor per iteration, since the state it needs is its inputs'
values *at that iteration* integrated over earlier ticks. Boundary rules:

    import:  ΔV[k] = Δin             (the outer change, at every iteration)
    delay:   ΔV[0] = 0, ΔV[k] = ΔV_src[k-1]
    export:  Δout = ΔV_src[K]        (K: where both old and new values have settled)

Stopping: the previous ticks settled by iteration K_old (every value at k ≥ K_old equals
the one at K_old). At k ≥ max(1, K_old), if no feedback source changed between k-1 and
k (ΔV_src[k] = ΔV_src[k-1]), the new values have settled too, and so have the old, so
ΔV_src[k] is exactly the change of the fixed point. Executors for iterations past K
hold the settled state; the first time an iteration beyond K is needed it starts as a
copy of iteration K's executor (copies share the immutable Arrow tables and cached
Spark levels of their traces).

`FixedPointRecompute` covers bodies with inner primitives (δ0, I, D, ∫): it keeps the
inputs (integrated over ticks in an incremental plan) on the driver and recomputes the
fixed point with the operator's reference definition each tick, emitting the
difference (D ∘ F ∘ I), or F of this tick's values in a circuit run literally.
"""
from __future__ import annotations

import copy
import time

from ..limits import check_tick_rows
from ..operators.fixedpoint import FixedPointDiverged
from ..zset import ZSet
from .batch import Batch
from .zsets import WEIGHT, concat, consolidate_arrow


def node_executor(ctx, op, schema):
    """The outer-Δ executor of one inner node (the incremental plan's choice)."""
    from .incremental import INCREMENTAL, Lifted

    if op.kind == "fixedpoint":
        return FixedPointDelta(ctx, op, schema) if op.relational_body else FixedPointRecompute(ctx, op, schema, integrate=True)
    if op.kind in INCREMENTAL:
        return INCREMENTAL[op.kind](ctx, op, schema)
    return Lifted(ctx, op, schema)


def _operators(op, into: dict) -> dict:
    """Every operator object inside a fixed point (shared, never copied, by clones)."""
    for inner in op.sub.operators.values():
        into[id(inner)] = inner
        if inner.kind == "fixedpoint":
            _operators(inner, into)
    return into


def _same(a, b) -> bool:
    """Two changes (Batch or None) hold the same Z-set."""
    if a is b:
        return True
    ta = a.table() if a is not None else None
    tb = b.table() if b is not None else None
    if ta is None or tb is None:
        return (ta is None or ta.num_rows == 0) and (tb is None or tb.num_rows == 0)
    if ta.num_rows != tb.num_rows:
        return False
    import pyarrow.compute as pc

    negated = tb.set_column(tb.schema.get_field_index(WEIGHT), WEIGHT, pc.negate(tb[WEIGHT]))
    return consolidate_arrow(concat([ta, negated])).num_rows == 0


def _compact(executor) -> None:
    """Consolidate the driver part of every trace an executor holds into one table. A
    copy made for the next iteration shares its predecessor's parts and adds one of its
    own; left alone, iteration k's traces would be k parts, each probed by every later
    lookup."""
    from .trace import Trace

    seen: set[int] = {id(executor.ctx)}  # (the runtime: never walk into the other nodes' executors)

    def walk(obj, depth=0):
        if id(obj) in seen or depth > 6:
            return
        seen.add(id(obj))
        if isinstance(obj, Trace):
            obj.recent  # noqa: B018  (reading it consolidates the driver parts into one)
            return
        values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else getattr(obj, "__dict__", {}).values()
        for value in values:
            if isinstance(value, (Trace, dict, list, tuple)) or type(value).__module__.startswith("dbsp.spark"):
                walk(value, depth + 1)

    walk(executor)


def _empty(change) -> bool:
    return change is None or change.table().num_rows == 0


def _sum(changes: list):
    """The sum of changes (Batch) of one schema, consolidated: None when empty."""
    if not changes:
        return None
    if len(changes) == 1:
        return changes[0]
    first = changes[0]
    return Batch.of_table(first.ctx, first.schema, consolidate_arrow(concat([c.table() for c in changes])))


class FixedPointDelta:
    def __init__(self, ctx, op, schema=None):
        from .incremental import Lifted

        self.ctx, self.op, self.sub = ctx, op, op.sub
        self.stateless = {}  # node -> one executor for every iteration (linear nodes)
        self.per_iteration: dict[str, list] = {}  # node -> executors for k = 0..K
        self.template: dict[str, object] = {}  # node -> the settled executor, to copy past K
        self.settled = 0  # K: the iteration from which every value stays the same
        self.iteration = 0
        self.inner_stats: dict[str, dict] = {}
        self._memo_base = {id(ctx): ctx} | _operators(op, {})
        for n in self.sub.order:
            inner = self.sub.operators[n]
            if inner.kind in ("import", "delay", "export"):
                continue
            made = node_executor(ctx, inner, self.sub.schemas.get(n))
            if isinstance(made, Lifted):
                self.stateless[n] = made
            else:
                self.per_iteration[n] = [made]
                self.template[n] = copy.deepcopy(made, dict(self._memo_base))  # empty state
        self.feedback = {n: self.sub.document.sources_of(n)["in"] for n in self.sub.order if self.sub.operators[n].kind == "delay"}
        self.started = False  # the first tick runs semi-naively (_first)

    def _executor(self, n: str, k: int):
        if n in self.stateless:
            return self.stateless[n]
        executors = self.per_iteration[n]
        while len(executors) <= k:
            source = self.template.get(n, executors[-1])
            executors.append(copy.deepcopy(source, dict(self._memo_base)))
        return executors[k]

    def step(self, inputs):
        if not self.started:
            self.started = True
            return self._first(inputs)
        sub, document = self.sub, self.sub.document
        stats = {n: {"rows_in": 0, "rows_out": 0, "ms": 0.0} for n in sub.order}
        previous: dict[str, object] = {}
        k = 0
        while True:
            if k >= self.op.max_iterations:
                raise FixedPointDiverged(f"node {self.op.node_id!r}: no fixed point after {self.op.max_iterations} iterations (max_iterations)")
            current: dict[str, object] = {}
            for n in sub.order:
                inner = sub.operators[n]
                t0 = time.perf_counter()
                if inner.kind == "import":
                    current[n] = inputs.get(n)
                elif inner.kind == "delay":
                    current[n] = previous.get(self.feedback[n]) if k > 0 else None
                else:
                    args = {port: current.get(src) for port, src in document.sources_of(n).items()}
                    if inner.kind == "export":
                        current[n] = args["in"]
                    else:
                        result = self._executor(n, k).step(args)
                        if inner.kind == "fixedpoint":
                            current.update(result)
                        else:
                            current[n] = result
                    s = stats[n]
                    s["rows_in"] += sum(self.ctx.size(v) or 0 for v in args.values())
                s = stats[n]
                s["rows_out"] += self.ctx.size(current.get(n)) or 0
                s["ms"] += (time.perf_counter() - t0) * 1000
            if k >= max(1, self.settled) and all(_same(current.get(src), previous.get(src)) for src in self.feedback.values()):
                break
            previous = current
            k += 1
        self._settle(k, stats)
        return {e: current.get(e) for e in self.op.outputs}

    def _settle(self, k: int, stats: dict) -> None:
        """Values are settled from k on: executors past k hold stale state; iteration k's
        is the one to copy when a later tick needs more iterations."""
        for n, executors in self.per_iteration.items():
            del executors[k + 1:]
            self.template[n] = copy.deepcopy(executors[k], dict(self._memo_base)) if len(executors) > k else executors[-1]
        self.settled = self.iteration = k
        for n, s in stats.items():
            s["ms"] = round(s["ms"], 3)
            rows = sum(e.state_rows() for e in self.per_iteration.get(n, []))
            if rows:
                s["state_rows"] = rows
        self.inner_stats = stats

    def _first(self, inputs):
        """The first tick, semi-naively: every per-iteration state is empty, so instead of
        feeding iteration k the whole value V[k] (and joining every path found so far
        again at every k), iteration k's executors start as copies of iteration k-1's
        (whose state is then V_in[k-1]) and receive only the inner difference
        d[k] = V[k] - V[k-1]: imports give their value at k = 0 and nothing after, a delay
        gives its source's d[k-1], linear nodes map differences to differences, and a
        stateful Δ executor holding V_in[k-1] answers d_in[k] with V_out[k] - V_out[k-1].
        It stops at the first k >= 1 where no feedback source changed (V[k] = V[k-1]:
        the reference's criterion); each executor k then holds V_in[k] integrated over
        the one tick, exactly the state the per-iteration form keeps, and the outputs
        are Σ_k d_export[k] = V[K] (the change from the empty fixed point)."""
        sub, document = self.sub, self.sub.document
        stats = {n: {"rows_in": 0, "rows_out": 0, "ms": 0.0} for n in sub.order}
        exported: dict[str, list] = {e: [] for e in self.op.outputs}
        previous: dict[str, object] = {}
        k = 0
        while True:
            if k >= self.op.max_iterations:
                raise FixedPointDiverged(f"node {self.op.node_id!r}: no fixed point after {self.op.max_iterations} iterations (max_iterations)")
            current: dict[str, object] = {}
            for n in sub.order:
                inner = sub.operators[n]
                t0 = time.perf_counter()
                if inner.kind == "import":
                    current[n] = inputs.get(n) if k == 0 else None
                elif inner.kind == "delay":
                    current[n] = previous.get(self.feedback[n]) if k > 0 else None
                else:
                    args = {port: current.get(src) for port, src in document.sources_of(n).items()}
                    if inner.kind == "export":
                        current[n] = args["in"]
                    else:
                        if n in self.stateless:
                            executor = self.stateless[n]
                        else:
                            executors = self.per_iteration[n]
                            if k > 0:
                                executors.append(copy.deepcopy(executors[k - 1], dict(self._memo_base)))
                            executor = executors[k]
                        result = executor.step(args)
                        if k > 0 and n not in self.stateless:
                            _compact(executor)
                        if inner.kind == "fixedpoint":
                            current.update(result)
                        else:
                            current[n] = result
                    s = stats[n]
                    s["rows_in"] += sum(self.ctx.size(v) or 0 for v in args.values())
                s = stats[n]
                s["rows_out"] += self.ctx.size(current.get(n)) or 0
                s["ms"] += (time.perf_counter() - t0) * 1000
            for e in exported:
                if current.get(e) is not None:
                    exported[e].append(current[e])
                    # each iteration's new rows are small; what they add up to is bounded too
                    check_tick_rows(self.op.node_id, self.op.kind, sum(self.ctx.size(v) or 0 for v in exported[e]), built=True,
                                    schema=self.op.output_schemas[e])
            if k >= 1 and all(_empty(current.get(src)) for src in self.feedback.values()):
                break
            previous = current
            k += 1
        self._settle(k, stats)
        return {e: _sum(parts) for e, parts in exported.items()}

    def progress(self, tick):
        return {"frontier": self.op.frontier(tick, self.iteration), "stats": self.inner_stats}

    def state_rows(self) -> int:
        return sum(e.state_rows() for executors in self.per_iteration.values() for e in executors)


class FixedPointRecompute:
    def __init__(self, ctx, op, schema=None, integrate: bool = False):
        self.ctx, self.op, self.integrate = ctx, op, integrate
        self.totals = {p: ZSet() for p in op.inputs}
        self.last = {e: ZSet() for e in op.outputs}
        self.iteration = 0

    def step(self, inputs):
        self.ctx.took("row")
        changes = {p: self.ctx.to_zset(v) for p, v in inputs.items()}
        if self.integrate:
            self.totals = {p: self.totals[p] + changes.get(p, ZSet()) for p in self.op.inputs}
            values = self.totals
        else:
            values = changes
        out, self.iteration = self.op.iterate(values)
        result = {}
        for e, value in out.items():
            emitted = value - self.last[e] if self.integrate else value
            if self.integrate:
                self.last[e] = value
            schema = self.op.output_schemas[e]
            result[e] = Batch.of_table(self.ctx, schema, self.ctx.to_table(emitted, schema))
        return result

    def progress(self, tick):
        return {"frontier": self.op.frontier(tick, self.iteration), "stats": {}}

    def state_rows(self) -> int:
        return sum(len(z) for z in self.totals.values()) + sum(len(z) for z in self.last.values())
