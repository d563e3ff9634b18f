"""Problems found in circuit documents, expressions and pushed data."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Problem:
    """One problem, naming where it is: a node (and its port or parameter), or a row/field."""

    message: str
    node: str | None = None
    port: str | None = None
    param: str | None = None
    row: int | None = None
    field: str | None = None
    position: int | None = None  # character offset inside an expression

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


class CircuitInvalid(ValueError):
    """A circuit document failed validation; `problems` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


class DataInvalid(ValueError):
    """Pushed rows failed validation; `problems` names each bad row and field."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


class ExpressionError(ValueError):
    """An expression could not be parsed, is outside the whitelist, or does not type-check."""

    def __init__(self, message: str, position: int | None = None):
        self.position = position
        super().__init__(message)
