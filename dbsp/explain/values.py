"""Every node's value at a tick (and, inside fixed points, at an iteration), from the
reference evaluator's capture (dbsp/capture.py), recomputed lazily per tick.

Outside fixed points a node's value at tick t is its contents then (the query over the
whole input tables through t). Inside a fixed point, its value at iteration path
(k,) — or (k1, k2) nested — of tick t; an iteration past the one where the fixed point
settled at that tick reads the settled value (from there on every iteration repeats).

A circuit that runs tick by tick (z⁻¹, I, D or event-time windows) is captured once, at
the latest tick asked, keeping every top-level node's delta at each tick (capture's
`keep`): the contents at an earlier tick are the later contents less the deltas since,
and in a circuit run as drawn a node's delta at a tick is its stream value then
(`stream`)."""
from __future__ import annotations

from typing import Sequence

from ..capture import NodeAt, capture
from ..plan import Plan
from .windows import KINDS as WINDOW_KINDS
from ..zset import ZSet


def _path(iteration) -> tuple:
    return iteration if isinstance(iteration, tuple) else (iteration,)


class Values:
    def __init__(self, plan: Plan, changes: Sequence[dict[str, ZSet]]):
        self.plan, self.changes = plan, changes
        self._at: dict[int, dict[str, NodeAt]] = {}
        self._iterations: dict[tuple[int, str], dict[tuple, ZSet]] = {}
        self._before: dict[tuple[int, str], ZSet] = {}
        self.by_ticks = not plan.whole_tables
        self.literal = plan.literal
        self._kept: dict[str, NodeAt] = {}  # by_ticks: top-level nodes with their history
        self._kept_tick = -1
        self._past: dict[tuple[int, str], ZSet] = {}
        self.memo: dict = {}  # rules' own per-run work (a window's admission replay)

    def _top_level(self) -> list[str]:
        keys = []
        for n in self.plan.order:
            op = self.plan.operators[n]
            keys += list(op.outputs) if op.kind == "fixedpoint" else [n]
        return keys

    def _kept_keys(self) -> list[str]:
        """The nodes whose past a walk reads. Run as drawn: every top-level node (z⁻¹, I,
        D reach any tick, and a stream value is cheap to keep). With event-time windows:
        what the windows read and everything upstream of it (a window replays its input's
        changes; a late row is followed back at its own tick); other nodes are read at the
        tick asked (and the one before), or captured at a tick of their own."""
        if self.literal:
            return self._top_level()
        owner = {e: n for n, op in self.plan.operators.items() if op.kind == "fixedpoint" for e in op.outputs}
        todo = [self.plan.sources(n)["in"] for n, op in self.plan.operators.items() if op.kind in WINDOW_KINDS]
        kept: set[str] = set()
        while todo:
            key = todo.pop()
            if key in kept:
                continue
            kept.add(key)
            node = owner.get(key, key)
            todo += list(self.plan.sources(node).values()) if node in self.plan.operators else []
        return [k for k in self._top_level() if k in kept]

    def _history(self, key: str, tick: int) -> NodeAt | None:
        """The kept node (with its history through at least `tick`), capturing if needed."""
        if tick > self._kept_tick:
            keep = self._kept_keys()
            at = capture(self.plan, self.changes, tick, keep=keep)
            self._at[tick] = at
            self._kept = {k: at[k] for k in keep if k in at}
            self._kept_tick, self._past = tick, {}
        return self._kept.get(key)

    def _unkept(self, key: str, tick: int) -> NodeAt | None:
        """A node without history at `tick`: from the tick captured, or a capture then."""
        if tick not in self._at:
            self._at[tick] = capture(self.plan, self.changes, tick)
        return self._at[tick].get(key)

    def delta(self, key: str, tick: int) -> ZSet:
        """A top-level node's delta at `tick` (its stream value, in a circuit run as drawn)."""
        if tick < 0:
            return ZSet()
        if not self.by_ticks:
            node = self.at(tick).get(key)
            return node.delta if node else ZSet()
        node = self._history(key, tick)
        if node is None:
            node = self._unkept(key, tick)
            return node.delta if node else ZSet()
        return node.history[tick]

    def stream(self, key: str, tick: int, path: tuple = ()) -> ZSet:
        """A node's value at `tick` as the circuit computes it then: its stream value in a
        circuit run as drawn (inside a fixed point: at the iteration), else its contents."""
        if path or not self.literal:
            return self.value(key, tick, path)
        return self.delta(key, tick)

    def _contents(self, key: str, tick: int) -> ZSet:
        node = self._history(key, tick)
        if node is None:
            if tick == self._kept_tick - 1 and (at := self._at[self._kept_tick].get(key)) is not None:
                return at.integral - at.delta  # the tick before the one captured
            node = self._unkept(key, tick)
            return node.integral if node else ZSet()
        if tick == self._kept_tick:
            return node.integral
        if (tick, key) not in self._past:
            above = tick + 1  # the nearest later tick known, then back down
            while above < self._kept_tick and (above, key) not in self._past:
                above += 1
            value = node.integral if above == self._kept_tick else self._past[(above, key)]
            for t in range(above - 1, tick - 1, -1):
                value = value - node.history[t + 1]
                self._past[(t, key)] = value
        return self._past[(tick, key)]

    def at(self, tick: int) -> dict[str, NodeAt]:
        if tick < 0:
            return {}
        if self.by_ticks and tick > self._kept_tick:
            self._history("", tick)
        if tick not in self._at:
            self._at[tick] = capture(self.plan, self.changes, tick)
        return self._at[tick]

    def iterations(self, key: str, tick: int) -> dict[tuple, ZSet]:
        if (tick, key) not in self._iterations:
            node = self.at(tick).get(key)
            self._iterations[(tick, key)] = {_path(k): v for k, v in (node.iterations if node else {}).items()}
        return self._iterations[(tick, key)]

    def settle(self, key: str, tick: int, path: tuple) -> tuple | None:
        """The recorded iteration that holds the value at `path` (None: none recorded)."""
        known = self.iterations(key, tick)
        if not known:
            return None
        if path in known:
            return path
        prefix = path[:-1]
        if prefix:
            prefix = self._settle_prefix(known, prefix)
            if prefix is None:
                return None
        same = [p[-1] for p in known if p[:-1] == prefix]
        if not same:
            return None
        below = [k for k in same if k <= path[-1]]
        return prefix + (max(below) if below else min(same),)

    @staticmethod
    def _settle_prefix(known, prefix: tuple) -> tuple | None:
        prefixes = {p[: len(prefix)] for p in known}
        if prefix in prefixes:
            return prefix
        same = [p[-1] for p in prefixes if p[:-1] == prefix[:-1]]
        return prefix[:-1] + (max(same),) if same else None

    def value(self, key: str, tick: int, path: tuple = ()) -> ZSet:
        if tick < 0:
            return ZSet()
        if not path and self.by_ticks:
            return self._contents(key, tick)
        if not path:
            if tick not in self._at and tick + 1 in self._at:  # the tick before one captured: its contents less its change
                if (tick, key) not in self._before:
                    node = self._at[tick + 1].get(key)
                    self._before[(tick, key)] = node.integral - node.delta if node else ZSet()
                return self._before[(tick, key)]
            node = self.at(tick).get(key)
            return node.integral if node else ZSet()
        found = self.settle(key, tick, path)
        return self.iterations(key, tick)[found] if found is not None else ZSet()

    def last_iteration(self, key: str, tick: int, prefix: tuple = ()) -> int:
        """The iteration at which the fixed point holding `key` settled at `tick` (-1: none)."""
        if tick < 0:
            return -1
        known = self.iterations(key, tick)
        if prefix:
            prefix = self._settle_prefix(known, prefix) or prefix
        same = [p[-1] for p in known if p[:-1] == prefix]
        return max(same) if same else -1
