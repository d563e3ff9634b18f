"""Why a row is in the value of a DBSP stream primitive at a tick (a circuit run as drawn,
where every node's value at a tick is its stream value then):

- integrate, I(x)[t] = Σ_{s≤t} x[s]: the values of x at ticks ≤ t that carry the row,
  each with its tick (their weights sum to the row's);
- differentiate, D(x)[t] = x[t] − x[t−1]: the row in x at t, less the row in x at t − 1;
- delay, z⁻¹(x)[t] = x[t−1] (outside fixed points): the row in x at the tick before
  (at tick 0 a delay holds nothing).
The same sum over ticks explains a row of a view's contents in such a circuit: a view
holds what its node emitted at each tick so far (`emitted`).
"""
from __future__ import annotations

from .steps import Group, Use


def _ticks(values, key: str, row: tuple, upto: int) -> list[Use]:
    out = []
    for s in range(upto + 1):
        w = values.stream(key, s).weight(row)
        if w:
            out.append(Use("in", row, w, node=key, tick=s))
    return out


def why_integrate(row, values, source: str, tick: int) -> list[Group]:
    uses = _ticks(values, source, row, tick)
    ticks = ", ".join(str(u.tick) for u in uses)
    return [Group(f"I: the sum of the values of {source!r} through tick {tick}; those that carry it "
                  f"(tick{'s' if len(uses) != 1 else ''} {ticks or 'none'})", uses)]


def why_differentiate(row, values, source: str, tick: int) -> list[Group]:
    now, before = values.stream(source, tick).weight(row), values.stream(source, tick - 1).weight(row)
    groups = [Group(f"D: its weight in {source!r} at tick {tick} ({now})",
                    [Use("in", row, now, node=source, tick=tick)] if now else [])]
    if tick > 0:
        groups.append(Group(f"less its weight in {source!r} at tick {tick - 1} ({before})",
                            [Use("in", row, before, node=source, tick=tick - 1)] if before else []))
    return groups


def why_delay(row, values, source: str, tick: int) -> list[Group]:
    if tick == 0:
        return []
    w = values.stream(source, tick - 1).weight(row)
    return [Group(f"z⁻¹: the value of {source!r} at tick {tick - 1}", [Use("in", row, w, node=source, tick=tick - 1)])]


def emitted(row, values, key: str, tick: int) -> list[Group]:
    uses = _ticks(values, key, row, tick)
    for u in uses:
        u.port = "value"
    ticks = ", ".join(str(u.tick) for u in uses)
    return [Group(f"the sum of its values through tick {tick}; those that carry it (tick{'s' if len(uses) != 1 else ''} "
                  f"{ticks or 'none'})", uses)]


RULES = {"integrate": why_integrate, "differentiate": why_differentiate, "delay": why_delay}
