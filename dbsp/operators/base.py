"""What every operator provides: ports, parameter checking and schema inference, its
meaning on whole Z-sets (`query`, the reference), and a Spark implementation.

The incremental (Δ) form of an operator is chosen by the compiler (`dbsp.plan`):
linear operators are their own Δ form; stateful ones (join, distinct, aggregate) have
an executor in `dbsp.spark.incremental`; stream primitives (z^-1, I, D) keep state in
any mode.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from ..document import NODE_ID
from ..errors import ExpressionError, Problem
from ..expr import Expr, parse_expression
from ..numeric import node_label
from ..types import Schema
from ..zset import ZSet


def valid_column_name(name) -> bool:
    """Letters, digits and _, not starting with a digit, and not the reserved `__` prefix."""
    return isinstance(name, str) and bool(NODE_ID.match(name)) and not name.startswith("__")


class Operator(ABC):
    kind: ClassVar[str]
    title: ClassVar[str] = ""
    category: ClassVar[str] = "relational"  # palette group
    inputs: ClassVar[tuple[str, ...]] = ("in",)
    outputs: ClassVar[tuple[str, ...]] = ("out",)
    #: Linear operators are their own incremental form: op^Δ = op, no state.
    linear: ClassVar[bool] = True
    #: "all": the output is empty when every input is (linear ops); "any": when any is (join).
    empty_when: ClassVar[str] = "all"
    #: A DBSP stream primitive (z^-1, I, D): keeps state across ticks, runs literally.
    stream: ClassVar[bool] = False
    #: z^-1: a cycle through it is causal.
    breaks_cycles: ClassVar[bool] = False
    #: the operator runtime errors name, when not `kind` (a window's inner aggregate)
    shown_as: str | None = None

    def __init__(self, node_id: str, params: dict):
        self.node_id = node_id
        self.params = params
        self.output_schema: Schema | None = None
        self.input_schemas: dict[str, Schema] = {}

    # ---- validation helpers ---------------------------------------------------------
    def problem(self, message: str, **where) -> Problem:
        return Problem(f"node {self.node_id!r}: {message}", node=self.node_id, **where)

    def expression(self, param: str, text, schema: Schema, problems: list[Problem], label: str | None = None) -> Expr | None:
        label = label or param
        if not isinstance(text, str) or not text.strip():
            problems.append(self.problem(f"{label} must be an expression", param=param))
            return None
        try:
            return parse_expression(text, schema, where=node_label(self.node_id, self.shown_as or self.kind))
        except ExpressionError as e:
            problems.append(self.problem(f"{label}: {e}", param=param, position=e.position))
            return None

    def columns_param(self, param: str, schema: Schema, problems: list[Problem], port: str = "in", allow_empty=False) -> list[str]:
        value = self.params.get(param, [] if allow_empty else None)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or (not value and not allow_empty):
            problems.append(self.problem(f"parameter {param!r} must be a {'' if allow_empty else 'non-empty '}list of column names", param=param))
            return []
        for name in value:
            if schema.column(name) is None:
                problems.append(self.problem(
                    f"{param}: unknown column {name!r} on port {port!r} (columns: {', '.join(schema.names)})", param=param, port=port))
        if len(set(value)) != len(value):
            problems.append(self.problem(f"{param}: a column is listed twice", param=param))
        return value

    # ---- meaning -----------------------------------------------------------------
    def validate(self, input_schemas: dict[str, Schema]) -> list[Problem]:
        self.input_schemas = input_schemas
        return self.check(input_schemas)

    @abstractmethod
    def check(self, input_schemas: dict[str, Schema]) -> list[Problem]:
        """Check parameters against the input schemas and set `output_schema`."""

    @abstractmethod
    def query(self, inputs: dict[str, ZSet]) -> ZSet:
        """The operator on whole Z-sets (one stream value): the reference semantics."""

    @abstractmethod
    def spark(self, ctx, inputs: dict):
        """The same on Spark DataFrames (data columns + `__w`); inputs are never None."""

    def arrow(self, tables: dict, output) -> "object | None":
        """Optionally, the same on Arrow tables on the driver (data columns + `__w`; an
        empty change is a table with no rows), giving a table of `output` (an Arrow
        schema); None when this operator has no such form for its parameters."""
        return None

    def describe_state(self) -> list[str]:
        """What the incremental form keeps (shown in the compiled plan)."""
        return []


class Grouped(Operator):
    """An operator whose output is recomputed per group of `group_by` (aggregate, top_k).

    The incremental executor relies on this contract: `group_by` (set by `check`, may
    be empty), `is_global`, `query` over any set of whole groups, and `spark_recompute`
    (the same on a DataFrame), so it can retract and re-emit just the touched groups.
    """

    category = "aggregates"
    linear = False
    group_by: list[str]

    @property
    def is_global(self) -> bool:
        return not self.group_by

    @abstractmethod
    def spark_recompute(self, df):
        """The operator over the groups present in `df`, on Spark."""
