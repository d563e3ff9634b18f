"""Problems of a Datalog program, each at a line:column of its source."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceProblem:
    message: str
    line: int | None
    column: int | None
    rule: int | None = None  # 1-based index of the rule, when one rule is at fault

    def as_dict(self) -> dict:
        return {k: v for k, v in {"message": self.message, "line": self.line, "column": self.column, "rule": self.rule}.items()
                if v is not None}

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message}" if self.line is not None else self.message


class DatalogInvalid(ValueError):
    """A program was refused; `problems` lists every problem found, each with its line:column."""

    def __init__(self, problems: list[SourceProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class DatalogTooBig(DatalogInvalid):
    """The program passes a bound of dbsp/limits.py (MAX_STATEMENTS, MAX_NODES): reading
    or compiling stopped at the rule or declaration that passes it."""
