"""The DBSP stream primitives, for circuits built by hand. They keep state across
ticks in any mode; a circuit that uses them runs literally (no incrementalization).

- delay (z^-1):      out[0] = 0, out[t] = in[t-1]. Cycles through it are causal.
- integrate (I):     out[t] = Σ_{i<=t} in[i]
- differentiate (D): out[t] = in[t] - in[t-1]      (D ∘ I = I ∘ D = identity)
"""
from __future__ import annotations

from ..zset import ZSet
from .base import Operator


class _Primitive(Operator):
    category = "primitives"
    stream = True
    linear = True  # all three are linear stream operators

    def check(self, input_schemas):
        self.output_schema = input_schemas["in"]
        return []

    def query(self, inputs):  # the pointwise view is meaningless for stream operators
        raise TypeError(f"{self.kind} is a stream operator; use its state")

    def spark(self, ctx, inputs):
        raise TypeError(f"{self.kind} is a stream operator; use its state")

    def new_state(self):
        """A fresh per-run state: step(value: ZSet) -> ZSet, one call per tick."""
        return _STATES[self.kind]()


class Delay(_Primitive):
    """delay (z^-1): out[0] = 0, out[t] = in[t-1].

    A cycle through a z^-1 is causal: at each tick it emits what it absorbed the tick
    before. Params: `schema` (optional): its columns, needed only when a feedback loop
    leaves them impossible to infer.
    """

    kind = "delay"
    title = "z⁻¹ (delay)"
    breaks_cycles = True

    def describe_state(self):
        return ["the previous tick's input"]


class Integrate(_Primitive):
    """integrate (I): out[t] = Σ_{i<=t} in[i]. Linear; state: the running sum."""

    kind = "integrate"
    title = "I (integrate)"

    def describe_state(self):
        return ["the running sum of the input"]


class Differentiate(_Primitive):
    """differentiate (D): out[t] = in[t] - in[t-1] (D ∘ I = I ∘ D = id). State: the previous input."""

    kind = "differentiate"
    title = "D (differentiate)"

    def describe_state(self):
        return ["the previous tick's input"]


class _DelayState:
    def __init__(self):
        self.previous = ZSet()

    def emit(self) -> ZSet:  # at the start of a tick, before the input is known
        return self.previous

    def absorb(self, value: ZSet) -> None:  # at the end of the tick
        self.previous = value


class _IntegrateState:
    def __init__(self):
        self.total = ZSet()

    def step(self, value: ZSet) -> ZSet:
        self.total = self.total + value
        return self.total


class _DifferentiateState:
    def __init__(self):
        self.previous = ZSet()

    def step(self, value: ZSet) -> ZSet:
        out = value - self.previous
        self.previous = value
        return out


_STATES = {"delay": _DelayState, "integrate": _IntegrateState, "differentiate": _DifferentiateState}
