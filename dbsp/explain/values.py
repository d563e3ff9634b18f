"""Every node's value at a tick (and, inside fixed points, at an iteration), from the
reference evaluator's capture (dbsp/capture.py), recomputed lazily per tick.

Outside fixed points a node's value at tick t is its contents then (the query over the
whole input tables through t). Inside a fixed point, its value at iteration path
(k,) — or (k1, k2) nested — of tick t; an iteration past the one where the fixed point
settled at that tick reads the settled value (from there on every iteration repeats)."""
from __future__ import annotations

from typing import Sequence

from ..capture import NodeAt, capture
from ..plan import Plan
from ..zset import ZSet


def _path(iteration) -> tuple:
    return iteration if isinstance(iteration, tuple) else (iteration,)


class Values:
    def __init__(self, plan: Plan, changes: Sequence[dict[str, ZSet]]):
        self.plan, self.changes = plan, changes
        self._at: dict[int, dict[str, NodeAt]] = {}
        self._iterations: dict[tuple[int, str], dict[tuple, ZSet]] = {}
        self._before: dict[tuple[int, str], ZSet] = {}

    def at(self, tick: int) -> dict[str, NodeAt]:
        if tick < 0:
            return {}
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
