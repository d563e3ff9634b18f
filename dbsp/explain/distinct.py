"""Why a row is in distinct's output: the input row equal to it, with its weight (> 0).
Change: its weight before and after the tick (distinct emits +1 when it rises above 0,
-1 when it falls to 0 or below)."""
from __future__ import annotations

from .rows import same_or_changed
from .steps import Group


def why_distinct(op, row, after, before):
    use = same_or_changed("in", row, after["in"], before and before["in"])
    if use is None:
        return []
    if before is None:
        label = f"the input holds it with weight {use.after}"
    else:
        label = f"its input weight went from {use.before} to {use.after}"
    return [Group(label, [use])]


RULES = {"distinct": why_distinct}
