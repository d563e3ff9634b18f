"""The walk back through the circuit: from a row of a node, the input rows that produced
it (each operator family's rule), and theirs, down to the input tables.

Two modes. "contents": why the row is in the node at the tick (every value is the query
over the whole input tables then). "change": why its weight changed at the tick, by the
Δ form of each operator: an input row that changed is followed as a change, one that
did not (the other side of a join pair, say) as contents. The input rows reached in
change mode are the tick's input changes the row's change comes from.

Inside a fixed point values are per iteration. A row is explained at the first
iteration from which it has had its weight (and, for a change, the same change) up to
the iteration asked about, so a path found at iteration 2 reads as the join of a path
found at iteration 1 and an edge; a delay at iteration k reads its input at k − 1; an
import reads the value outside. The walk is bounded: `max_steps` steps, each group
shows `page_size` rows (the count says how many it has), and a row explained once is
referred to after that.
"""
from __future__ import annotations

from . import distinct, grouped, joins, linear
from .scopes import Where, scopes
from .steps import Group, Step, Use
from .values import Values

RULES = {**linear.RULES, **joins.RULES, **grouped.RULES, **distinct.RULES}
PASS_THROUGH = {"output": "the view of its input", "export": "leaves the fixed point"}


class Walk:
    def __init__(self, plan, values: Values, tick: int, *, page: int = 0, page_size: int = 20,
                 max_steps: int = 200, first_id: int = 1):
        self.plan, self.values, self.tick = plan, values, tick
        self.where: dict[str, Where] = scopes(plan)
        self.page, self.page_size, self.max_steps = page, page_size, max_steps
        self.next_id = first_id
        self.memo: dict[tuple, Step] = {}
        self.truncated = False
        self.shown: set[int] = set()  # steps placed in the tree (later uses refer to them)

    # ---- weights -------------------------------------------------------------------
    def weights(self, key: str, path: tuple, row: tuple, mode: str) -> tuple[int, int | None]:
        after = self.values.value(key, self.tick, path).weight(row)
        before = self.values.value(key, self.tick - 1, path).weight(row) if mode == "change" else None
        return after, before

    def first_iteration(self, key: str, path: tuple, row: tuple, mode: str) -> tuple:
        """The earliest iteration from which the row has had the weights it has at `path`."""
        now = self.weights(key, path, row, mode)
        k = path[-1]
        while k > 0 and self.weights(key, path[:-1] + (k - 1,), row, mode) == now:
            k -= 1
        return path[:-1] + (k,)

    # ---- the walk ------------------------------------------------------------------
    def step(self, key: str, path: tuple, row: tuple, mode: str, root: bool = False) -> Step | None:
        where = self.where[key]
        entering = where.depth > len(path)  # a fixed point's result, read from outside
        if not entering and path:
            path = self.first_iteration(key, path, row, mode)
        memo_key = (key, path, row, mode, entering)
        if memo_key in self.memo:
            return self.memo[memo_key]
        if len(self.memo) >= self.max_steps:
            self.truncated = True
            return None
        after, before = self.weights(key, path, row, mode) if not entering else self._settled_weights(key, path, row, mode)
        step = Step(self.next_id, key, "fixedpoint" if entering else where.op.kind, row, mode, after, before,
                    tick=self.tick, iteration=path, first_iteration=bool(path) and not entering,
                    fixedpoint=where.fixedpoint)
        self.next_id += 1
        self.memo[memo_key] = step
        if root:
            self.shown.add(step.id)
        step.groups = self._groups(step, where, key, path, row, mode, entering)
        for group in step.groups:
            group.total = len(group.uses)
            if root:
                group.offset = self.page * self.page_size
            group.uses = group.uses[group.offset: group.offset + self.page_size]
            for use in group.uses:
                self._follow(use, step, mode)
        return step

    def _settled_weights(self, key, path, row, mode):
        k = self._settled(key, path, mode)
        return self.weights(key, path + (k,), row, mode)

    def _settled(self, key: str, prefix: tuple, mode: str) -> int:
        last = self.values.last_iteration(key, self.tick, prefix)
        if mode == "change":
            last = max(last, self.values.last_iteration(key, self.tick - 1, prefix))
        return max(last, 0)

    def _follow(self, use: Use, parent: Step, mode: str) -> None:
        child_mode = "change" if mode == "change" and use.changed else "contents"
        child = self.step(use.node, use.iteration, use.row, child_mode)
        if child is None:
            use.followed = False
            return
        use.iteration = child.iteration
        if child.id in self.shown:
            use.ref = child.id
        else:
            use.step = child
            self.shown.add(child.id)

    def _groups(self, step: Step, where: Where, key: str, path: tuple, row: tuple, mode: str,
                entering: bool) -> list[Group]:
        kind = where.op.kind
        if entering:
            k = self._settled(key, path, mode)
            step.note = f"the fixed point {where.fixedpoint!r} settles at iteration {k}"
            return [self._passing(f"its value at iteration {k}", key, path + (k,), step)]
        if kind == "input":
            step.note = "a row of the input table"
            return []
        if kind == "delay":
            k = path[-1]
            if k == 0:
                return []
            step.note = f"z⁻¹: the value of {where.sources['in']!r} at the previous iteration"
            return [self._passing(f"from iteration {k - 1}", where.sources["in"], path[:-1] + (k - 1,), step)]
        if kind in ("import", "delta0"):
            step.note = "brought into the fixed point from outside"
            return [self._passing("from outside the fixed point", where.sources["in"], path[:-1], step)]
        if kind in PASS_THROUGH:
            return [self._passing(PASS_THROUGH[kind], where.sources["in"], path, step)]
        rule = RULES.get(kind)
        if rule is None:
            step.note = f"{kind} rows are not traced further"
            return []
        after = {port: self.values.value(src, self.tick, path) for port, src in where.sources.items()}
        before = ({port: self.values.value(src, self.tick - 1, path) for port, src in where.sources.items()}
                  if mode == "change" else None)
        groups = rule(where.op, row, after, before)
        for group in groups:
            for use in group.uses:
                use.node, use.iteration = where.sources[use.port], path
        return groups

    @staticmethod
    def _passing(label: str, source: str, path: tuple, step: Step) -> Group:
        """The same row in one input (a view, a delay, an import): its weights are the step's."""
        return Group(label, [Use("in", step.row, step.after, step.before, node=source, iteration=path)])
