"""The pure-Python reference evaluator: the oracle the Spark engine is tested against.

It evaluates the circuit *literally* on Python Z-sets, with each relational operator
recomputed from scratch on whole values every tick (`Operator.query`). A relational
circuit denotes the query Q over tables, so its input streams are integrated and its
outputs differentiated: out = D(Q(I(in))). Circuits with DBSP primitives run as drawn.
Nothing here is incremental, which is the point: it checks the incremental engine.
"""
from __future__ import annotations

from .operators.primitives import _DelayState, _DifferentiateState, _IntegrateState
from .plan import Plan
from .runtime import Runtime
from .zset import ZSet


class _Query:
    def __init__(self, op):
        self.op = op

    def step(self, inputs):
        return self.op.query({p: v if v is not None else ZSet() for p, v in inputs.items()})


class _Stream:
    def __init__(self, state):
        self.state = state

    def step(self, inputs):
        return self.state.step(inputs["in"] if inputs["in"] is not None else ZSet())


class _Delay:
    def __init__(self):
        self.state = _DelayState()

    def emit(self):
        return self.state.emit()

    def absorb(self, value):
        self.state.absorb(value if value is not None else ZSet())


class _FixedPoint:
    """The fixed point recomputed from its inputs' whole values (or, in a circuit run
    literally, this tick's stream values)."""

    observes_iterations = True

    def __init__(self, op):
        self.op, self.iteration = op, 0

    def step(self, inputs, observe=None):
        out, self.iteration = self.op.iterate({p: v if v is not None else ZSet() for p, v in inputs.items()},
                                              observe=observe)
        return out

    def progress(self, tick):
        return {"frontier": self.op.frontier(tick, self.iteration), "stats": {}}


class ReferenceRuntime(Runtime):
    def make_executor(self, node_id):
        op = self.plan.operators[node_id]
        if op.kind == "fixedpoint":
            return _FixedPoint(op)
        # Order-dependent operators (windows' lateness, keyed tables) keep state here too.
        if hasattr(op, "reference_state") and (state := op.reference_state(self.plan.literal)) is not None:
            return state
        if op.kind == "delay":
            return _Delay()
        if op.kind == "integrate" or (op.kind == "input" and not self.plan.literal):
            return _Stream(_IntegrateState())
        if op.kind == "differentiate" or (op.kind == "output" and not self.plan.literal):
            return _Stream(_DifferentiateState())
        return _Query(op)

    def from_zset(self, node_id, z):
        return z

    def node_finished(self, node_id, stats):
        stats["path"] = "reference"

    def collect(self, value):
        return value if value is not None else ZSet()


def recompute(plan: Plan, tables: dict[str, ZSet]) -> dict[str, ZSet]:
    """The query evaluated once over whole tables: view -> its full contents."""
    return ReferenceRuntime(plan).step({k: v for k, v in tables.items() if v}).outputs
