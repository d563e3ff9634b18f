"""fixedpoint: a recursive subcircuit evaluated to its fixed point in nested time.

A `fixedpoint` node holds a circuit (`subcircuit`) whose time is a second, inner
dimension: at every outer tick t it runs iterations k = 0, 1, 2, ... until nothing in it
changes any more, and its outputs are the values it settles on. Timestamps inside are
(t, k). Boundary nodes inside:

- `import`: an outer stream brought in as a constant inner stream, x at every
  iteration (= I(δ0(x)) in DBSP's terms). The port of the fixedpoint node named after
  the import node's id feeds it.
- `delta0` (δ0, stream introduction): x at iteration 0 and the empty Z-set after.
- `export`: leaves the subcircuit through the fixedpoint's output port named after the
  export's id. Mode "value" (default): the value its input settles on, lim_k s[k].
  Mode "sum" (DBSP's integral-to-limit ∫): Σ_k s[k], which needs s to reach 0.

Cycles inside must pass a `delay` (z^-1 in inner time: out[0] = 0, out[k] = in[k-1]).
Recursion over relations is written with a feedback delay, e.g. transitive closure:
paths = distinct(edges ∪ π(z^-1(paths) ⋈ edges)).

Iteration k is complete when it has run; the fixed point is reached at the first k ≥ 1
where the inner state (every delay's, integrate's and differentiate's) did not change,
since from then on every iteration repeats. `max_iterations` (default 1000) bounds the
loop: a circuit that does not settle fails the tick naming this node.

Incremental form (DBSP §6, nested time): when the body is relational (only import,
export "value", delays and relational operators), every inner node is evaluated in
outer-Δ form *per iteration*: at outer tick t and iteration k it receives the change
ΔV[k] = V_t[k] - V_{t-1}[k] of its inputs' values at iteration k and keeps, per k, the
integral over outer ticks of its inputs (its usual Δ-form state, one copy per
iteration). So an outer insert or delete does work proportional to what it changes at
each iteration, and deletions retract exactly the derivations that used them. Bodies
with inner primitives run as D ∘ F ∘ I, recomputing the fixed point each tick.
"""
from __future__ import annotations

from ..errors import Problem
from ..types import Schema
from ..zset import ZSet
from .base import Operator

MAX_ITERATIONS = 1000
BOUNDARY_IN = ("import", "delta0")


class FixedPointDiverged(RuntimeError):
    """A fixed point was not reached within max_iterations (a runtime error of one tick)."""


def _nested(observe, outer_iteration: int):
    """An observer for a nested fixed point's inner nodes: iterations as a path (outer, inner)."""
    def nested(node_id, value, iteration=0):
        path = iteration if isinstance(iteration, tuple) else (iteration,)
        observe(node_id, value, iteration=(outer_iteration, *path))
    return nested


class FixedPoint(Operator):
    kind = "fixedpoint"
    title = "Fixed point (recursive subcircuit)"
    category = "recursion"
    linear = False
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    #: Validates the subcircuit like a circuit: `dbsp.validate.check_scope`, set on each
    #: fixedpoint node by the validator (the validator depends on the operators, not the
    #: other way round).
    check_subcircuit = None

    def __init__(self, node_id, params, subcircuit=None):
        super().__init__(node_id, params)
        self.subcircuit = subcircuit
        self.sub = None  # the validated subcircuit (dbsp.validate.Validated)
        if subcircuit is not None:
            self.inputs = tuple(n.id for n in subcircuit.nodes.values() if n.kind in BOUNDARY_IN)
            self.outputs = tuple(n.id for n in subcircuit.nodes.values() if n.kind == "export")

    @property
    def max_iterations(self) -> int:
        return self.params.get("max_iterations", MAX_ITERATIONS)

    @property
    def relational_body(self) -> bool:
        """True when every inner node has an outer-Δ form (see the module doc)."""
        return all(
            (op.kind == "delay" or not op.stream) and not (op.kind == "export" and op.mode == "sum")
            and (op.kind != "fixedpoint" or op.relational_body)
            for op in self.sub.operators.values()
        )

    def check(self, input_schemas):
        problems = []
        limit = self.params.get("max_iterations", MAX_ITERATIONS)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            problems.append(self.problem("max_iterations must be a positive integer", param="max_iterations"))
        if not self.inputs:
            problems.append(self.problem("the subcircuit needs an import (or delta0) node to bring a stream in", param="subcircuit"))
        if not self.outputs:
            problems.append(self.problem("the subcircuit needs an export node to give a result", param="subcircuit"))
        if problems:
            return problems
        self.sub = self.check_subcircuit(self.subcircuit, boundary=input_schemas)
        if self.sub.problems:
            return list(self.sub.problems)
        self.output_schemas = {e: self.sub.schemas[e] for e in self.outputs}
        self.output_schema = self.output_schemas[self.outputs[0]]
        return []

    def describe_state(self):
        if self.relational_body:
            return ["per inner iteration k: each stateful inner node's Δ-form state (its inputs at k integrated over ticks)"]
        return ["the integral of each input; the fixed point is recomputed each tick"]

    def inner_ids(self) -> list[str]:
        """Every node inside, nested fixed points' nodes included."""
        out = []
        for n in self.sub.order:
            out.append(n)
            if self.sub.operators[n].kind == "fixedpoint":
                out += self.sub.operators[n].inner_ids()
        return out

    def frontier(self, tick: int, iteration: int) -> dict[str, dict]:
        """This tick's progress for the node and every node inside: the outer tick, the
        inner iteration reached, converged (a tick only completes when it converged)."""
        mark = {"tick": tick, "iteration": iteration, "converged": True}
        return {n: dict(mark) for n in [self.node_id, *self.inner_ids()]}

    # ---- the reference semantics ---------------------------------------------------
    def query(self, inputs: dict[str, ZSet]) -> dict[str, ZSet]:
        """The fixed point of the subcircuit for these input values: export id -> value."""
        return self.iterate(inputs)[0]

    def iterate(self, inputs: dict[str, ZSet], observe=None) -> tuple[dict[str, ZSet], int]:
        """(export id -> value, the iteration at which it settled). `observe(inner_id,
        value, iteration=k)`, when given, sees every inner node's value at every
        iteration k (nested fixed points: their own inner nodes too)."""
        from .primitives import _DifferentiateState, _IntegrateState

        sub = self.sub
        states = {}
        for n in sub.order:
            kind = sub.operators[n].kind
            if kind == "integrate":
                states[n] = _IntegrateState()
            elif kind == "differentiate":
                states[n] = _DifferentiateState()
        delays = [n for n in sub.order if sub.operators[n].kind == "delay"]
        held = {n: ZSet() for n in delays}  # what each delay emits at the next iteration
        sums = {n: ZSet() for n in sub.order if sub.operators[n].kind == "export"}
        previous = None
        for k in range(self.max_iterations):
            values = {n: held[n] for n in delays}
            for n in sub.order:
                op = sub.operators[n]
                if op.kind == "delay":
                    continue
                if op.kind == "import":
                    values[n] = inputs.get(n) or ZSet()
                elif op.kind == "delta0":
                    values[n] = (inputs.get(n) or ZSet()) if k == 0 else ZSet()
                else:
                    args = {port: values.get(src) or ZSet() for port, src in sub.document.sources_of(n).items()}
                    if n in states:
                        values[n] = states[n].step(args["in"])
                    elif op.kind == "fixedpoint":
                        values.update(op.iterate(args, observe=_nested(observe, k))[0] if observe else op.query(args))
                    else:
                        values[n] = op.query(args)
            if observe is not None:
                for n in sub.order:
                    if n in values:
                        observe(n, values[n], iteration=k)
            for n in sums:
                sums[n] = sums[n] + values[n]
            held = {n: values.get(sub.document.sources_of(n)["in"]) or ZSet() for n in delays}
            state = (held, {n: (s.total if hasattr(s, "total") else s.previous) for n, s in states.items()})
            if k >= 1 and state == previous:
                out = {}
                for n in sums:
                    if sub.operators[n].mode == "sum":
                        if values[n]:
                            raise FixedPointDiverged(
                                f"node {n!r}: the stream it sums does not reach 0 (it repeats {len(values[n])} rows forever)")
                        out[n] = sums[n]
                    else:
                        out[n] = values[n]
                return out, k
            previous = state
        raise FixedPointDiverged(f"node {self.node_id!r}: no fixed point after {self.max_iterations} iterations (max_iterations)")

    def spark(self, ctx, inputs):
        raise TypeError("a fixed point runs through its executor (dbsp.spark.fixedpoint)")


class _Boundary(Operator):
    category = "recursion"
    inputs = ()
    boundary_schema: Schema | None = None

    def check(self, input_schemas):
        if self.boundary_schema is None:
            return [self.problem(f"{self.kind} only belongs inside a fixed point's subcircuit")]
        self.output_schema = self.boundary_schema
        return []

    def query(self, inputs):
        raise TypeError(f"{self.kind} is evaluated by its fixed point")

    def spark(self, ctx, inputs):
        raise TypeError(f"{self.kind} is evaluated by its fixed point")


class Import(_Boundary):
    """import: inside a fixed point, the outer stream on the fixedpoint's port of this
    node's id, as a constant inner stream: out[t][k] = in[t] for every iteration k."""

    kind = "import"
    title = "Import (outer → inner, constant)"


class Delta0(_Boundary):
    """delta0 (δ0, stream introduction): inside a fixed point, the outer value at
    iteration 0 and nothing after: out[t][0] = in[t], out[t][k>0] = 0."""

    kind = "delta0"
    title = "δ0 (outer → inner, at iteration 0)"
    linear = True
    stream = True


class Export(Operator):
    """export: leaves a fixed point through the port named after this node's id.
    Params: `mode` "value" (default: lim_k in[k], the value the input settles on) or
    "sum" (∫, DBSP's integral to the limit: Σ_k in[k], the input must reach 0)."""

    kind = "export"
    title = "Export (inner → outer)"
    category = "recursion"
    outputs = ()
    inside = False  # set by validation for exports inside a subcircuit

    @property
    def mode(self) -> str:
        return self.params.get("mode", "value")

    @property
    def stream(self) -> bool:  # ∫ is an inner-time stream operator
        return self.mode == "sum"

    def check(self, input_schemas):
        if not self.inside:
            return [self.problem("export only belongs inside a fixed point's subcircuit")]
        if self.mode not in ("value", "sum"):
            return [self.problem(f"mode must be 'value' or 'sum', got {self.mode!r}", param="mode")]
        self.output_schema = input_schemas["in"]
        return []

    def query(self, inputs):
        return inputs["in"]

    def spark(self, ctx, inputs):
        return inputs["in"]


def boundary_problem(op, inner: bool) -> Problem | None:
    """input/output belong to the top level; import/delta0/export to a subcircuit."""
    if inner and op.kind in ("input", "output"):
        return op.problem(f"{op.kind} belongs to the top level; inside a fixed point use import/export")
    return None
