"""A wall-clock budget for one request's compile, validate or plan work.

Cooperative: the caller opens `deadline(seconds)` around the work (a context variable,
so it follows the request under ASGI's threads and needs no signals), and the loops
that may run long (per statement, rule, node) call `check(where)`, which raises
`BudgetExceeded` once the time is up. Outside a `deadline` block, `check` does nothing.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("dbsp_deadline", default=None)  # (at, seconds)


class BudgetExceeded(Exception):
    """The work ran past its wall-clock budget; `where` names what it was doing."""

    def __init__(self, seconds: float, where: str = "", line: int | None = None, column: int | None = None):
        self.seconds, self.where, self.line, self.column = seconds, where, line, column
        at = f" (stopped at {where})" if where else ""
        super().__init__(f"the work took longer than its budget of {seconds:g} s{at}")


@contextmanager
def deadline(seconds: float):
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check(where: str = "", line: int | None = None, column: int | None = None) -> None:
    """Raise BudgetExceeded when the current deadline has passed."""
    current = _DEADLINE.get()
    if current is not None and time.monotonic() >= current[0]:
        raise BudgetExceeded(current[1], where, line, column)
