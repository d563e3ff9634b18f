"""What every operator provides: ports, parameter checking, schema inference, and an
implementation for each backend (Spark DataFrames and pure-Python Z-sets)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from ..errors import Problem
from ..types import Schema


class Operator(ABC):
    kind: ClassVar[str]
    inputs: ClassVar[tuple[str, ...]] = ()
    outputs: ClassVar[tuple[str, ...]] = ("out",)
    #: Linear operators are their own incremental form: out^Δ = op(Δin), no state.
    linear: ClassVar[bool] = True

    def __init__(self, node_id: str, params: dict):
        self.node_id = node_id
        self.params = params
        self.output_schema: Schema | None = None

    def problem(self, message: str, **where) -> Problem:
        return Problem(f"node {self.node_id!r}: {message}", node=self.node_id, **where)

    @abstractmethod
    def check(self, input_schemas: dict[str, Schema]) -> list[Problem]:
        """Check parameters against the input schemas and set `output_schema`."""

    # Backends. `delta` maps input port -> that port's change at this tick (None = empty).
    @abstractmethod
    def spark(self, ctx, delta: dict):
        """This tick's output change as a DataFrame (None when empty: no Spark job)."""

    @abstractmethod
    def reference(self, delta: dict):
        """This tick's output change as a ZSet (None when empty)."""
