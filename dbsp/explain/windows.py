"""Why a row comes out of an event-time window (tumbling, sliding, session): the rows of
its group that fell in its window, without the late ones.

An output row (group_by..., window_start, window_end, aggregates...) is the aggregate of
the input rows of its group whose contributions to that window were accepted, so the
walk replays the window's admission tick by tick (dbsp/operators/window.py's rule, on
the input's change at each tick): a row's contribution to a window ending at or before
the waterline at the start of its tick was dropped, and says so ("2 late rows of this
group were dropped at tick 2"), each late row followed to the input change that
brought it. A session's rows are those the sessions of the group's accepted rows put
between its bounds; a late row is relevant to it when it would have fallen in it or
joined it (start − gap < t < end).

Contents: the window's rows at the tick, and every late row of its group and window so
far. Change: the group's accepted changes at the tick that reach the window (weights
before and after), the window's rows that did not change, and the tick's late rows. In
a circuit run as drawn (with z⁻¹, I or D) a window applies to each whole value, without
lateness: the window's rows of the value at the tick.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..operators.window import SessionWindow, from_units, to_units
from ..zset import ZSet
from .rows import row_order
from .steps import Group, Use

KINDS = ("tumbling_window", "sliding_window", "session_window")


@dataclass
class _Arrival:
    row: tuple
    weight: int
    kept: tuple  # windows (start, end) accepted; a session: ((None, None),) when accepted
    dropped: tuple  # windows whose contribution was late


def _moment(op, units) -> str:
    value = from_units(units, op.time_type)
    return str(value)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


class _Window:
    """One output row's window: its group key and bounds, and the input rows in it."""

    def __init__(self, op, row: tuple):
        self.op = op
        g = len(op.group_by)
        self.key = tuple(row[:g])
        self.start, self.end = to_units(row[g], op.time_type), to_units(row[g + 1], op.time_type)
        self.session = isinstance(op, SessionWindow)

    def label(self) -> str:
        group = ", ".join(f"{c} = {v!r}" for c, v in zip(self.op.group_by, self.key)) or "all rows"
        what = "session" if self.session else "window"
        return f"{what} [{_moment(self.op, self.start)}, {_moment(self.op, self.end)}) of group {group}"

    def in_group(self, row) -> bool:
        return tuple(row[i] for i in self.op._keys) == self.key

    def reaches(self, arrival: _Arrival, windows: tuple) -> bool:
        """Whether the arrival's contribution (kept or dropped) concerns this window."""
        if not self.in_group(arrival.row):
            return False
        if self.session:
            t = self.op.units(arrival.row)
            return bool(windows) and self.start - self.op.gap < t < self.end
        return (self.start, self.end) in windows

    def members(self, accepted: ZSet) -> dict[tuple, int]:
        """The input rows this window holds, given the accepted rows (or a whole value)."""
        op = self.op
        if self.session:
            group = ZSet([(r, w) for r, w in accepted if self.in_group(r)])
            n = len(op.input_schemas["in"].names)
            return {r[:n]: w for r, w in op.sessions(group)
                    if (to_units(r[n], op.time_type), to_units(r[n + 1], op.time_type)) == (self.start, self.end)}
        out = {}
        for r, w in accepted:
            t = op.units(r)
            if t is not None and self.in_group(r) and (self.start, self.end) in op.windows_of(t):
                out[r] = w
        return out


def _replay(op, values, source: str, tick: int) -> list[tuple[int | None, list[_Arrival]]]:
    """Each tick's (waterline at its start, arrivals) through `tick`: the admission rule
    replayed on the input's change at each tick."""
    memo = values.memo.get(("window", op.node_id))
    if memo is not None and len(memo) > tick:
        return memo[: tick + 1]
    out, waterline = [], None
    for s in range(tick + 1):
        change = values.delta(source, s)
        arrivals = []
        for r, w in change:
            t = op.units(r)
            if t is None:
                continue
            if isinstance(op, SessionWindow):
                late = waterline is not None and t + op.gap <= waterline
                everything = ((None, None),)
                arrivals.append(_Arrival(r, w, () if late else everything, everything if late else ()))
            else:
                windows = op.windows_of(t)
                kept = tuple(x for x in windows if waterline is None or x[1] > waterline)
                arrivals.append(_Arrival(r, w, kept, tuple(x for x in windows if x not in kept)))
        out.append((waterline, arrivals))
        waterline = op.advance(change, waterline)
    values.memo[("window", op.node_id)] = out
    return out


def _accepted(window: _Window, replay, upto: int) -> ZSet:
    """Σ of the accepted contributions of the window's group (a session: of the group's
    rows) through tick `upto`."""
    rows = []
    for _, arrivals in replay[: upto + 1]:
        for a in arrivals:
            if window.in_group(a.row) and (window.session and a.kept or (window.start, window.end) in a.kept):
                rows.append((a.row, a.weight))
    return ZSet(rows)


def _late_group(window: _Window, op, values, source: str, tick: int, waterline, arrivals) -> Group | None:
    late = [a for a in arrivals if window.reaches(a, a.dropped)]
    if not late:
        return None
    n = sum(abs(a.weight) for a in late)
    label = (f"{_plural(n, 'late row', 'late rows')} of this group {'was' if n == 1 else 'were'} dropped at tick {tick} "
             f"(behind the waterline {_moment(op, waterline)})")
    now, before = values.value(source, tick), values.value(source, tick - 1)
    return Group(label, [Use("in", a.row, now.weight(a.row), before.weight(a.row), tick=tick)
                         for a in sorted(late, key=lambda a: row_order(a.row))], dropped=True)


def _uses(members: dict[tuple, int], before: dict[tuple, int] | None = None) -> list[Use]:
    return [Use("in", r, members[r], None if before is None else before.get(r, 0))
            for r in sorted(members, key=row_order) if members[r]]


def why_window(op, row, values, source: str, tick: int, mode: str) -> list[Group]:
    window = _Window(op, row)
    if mode == "value":  # run as drawn: the window's rows of the value at the tick, no lateness
        members = window.members(values.stream(source, tick))
        return [Group(f"{window.label()}: {_plural(len(members), 'row', 'rows')} of its input at tick {tick}",
                      _uses(members))]
    replay = _replay(op, values, source, tick)
    now = window.members(_accepted(window, replay, tick))
    if mode == "contents":
        uses = _uses(now)
        table = values.value(source, tick)
        for use in uses:  # a row the input has since lost by a late delete: shown where it was accepted
            if table.weight(use.row) != use.after:
                use.tick = max(s for s, (_, arrivals) in enumerate(replay)
                               if any(a.row == use.row and window.reaches(a, a.kept) for a in arrivals))
        groups = [Group(f"{window.label()}: {_plural(len(now), 'row', 'rows')}", uses)]
        for s, (waterline, arrivals) in enumerate(replay):
            late = _late_group(window, op, values, source, s, waterline, arrivals)
            if late is not None:
                groups.append(late)
        return groups
    before = window.members(_accepted(window, replay, tick - 1)) if tick > 0 else {}
    group_now, group_before = _accepted(window, replay, tick), _accepted(window, replay, tick - 1)
    changed = sorted({a.row for a in replay[tick][1] if window.reaches(a, a.kept)}, key=row_order)
    uses = [Use("in", r, group_now.weight(r), group_before.weight(r)) for r in changed]
    groups = [Group(f"{window.label()}: {_plural(len(before), 'row', 'rows')} before, {len(now)} after; "
                    f"the rows that changed", [u for u in uses if u.changed])]
    same = {r: w for r, w in {**before, **now}.items() if r not in changed and w}
    if same:
        groups.append(Group(f"the {'session' if window.session else 'window'}'s rows that did not change",
                            [Use("in", r, w, w) for r, w in sorted(same.items(), key=lambda x: row_order(x[0]))]))
    late = _late_group(window, op, values, source, tick, *replay[tick])
    if late is not None:
        groups.append(late)
    return groups
