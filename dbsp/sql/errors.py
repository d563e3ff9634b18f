"""Problems in SQL text, each naming the construct and its line:column span."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """Where a construct is in the SQL text: 1-based lines and columns, end inclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def as_dict(self) -> dict:
        return {"start": {"line": self.line, "column": self.column},
                "end": {"line": self.end_line, "column": self.end_column}}

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@dataclass(frozen=True)
class SqlProblem:
    message: str
    span: Span | None = None

    def as_dict(self) -> dict:
        out = {"message": self.message}
        if self.span is not None:
            out |= {"line": self.span.line, "column": self.span.column, "source": self.span.as_dict()}
        return out

    def __str__(self) -> str:
        return f"{self.span}: {self.message}" if self.span else self.message


class SqlError(ValueError):
    """SQL that cannot be compiled; `problems` name each construct and its line:column."""

    def __init__(self, problems: list[SqlProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class SqlTooBig(SqlError):
    """The script passes a bound of dbsp/limits.py: compiling stops at the construct that
    passes it (no further statement is tried)."""


class NotExpressible(ValueError):
    """A circuit node that SQL cannot express (export_sql); `node` names it."""

    def __init__(self, node: str, reason: str):
        self.node = node
        super().__init__(f"node {node!r}: {reason}")
