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

Circuits that run tick by tick: an event-time window's row is explained by its
window's rows and late rows (windows.py), which reach back to earlier ticks. A circuit
with z⁻¹, I or D runs as drawn: below the row asked about, every step is in mode
"value", the node's stream value at its own tick (I, D and z⁻¹ reach earlier ticks:
streams.py), and a row of a node's contents is the sum of its values so far.
"""
from __future__ import annotations

from . import distinct, grouped, joins, linear, streams, windows
from .scopes import Where, scopes
from .steps import Group, Step, Use
from .values import Values

RULES = {**linear.RULES, **joins.RULES, **grouped.RULES, **distinct.RULES}
PASS_THROUGH = {"output": "the view of its input", "export": "leaves the fixed point"}


class Walk:
    def __init__(self, plan, values: Values, tick: int, *, page: int = 0, page_size: int = 20,
                 max_steps: int = 200, first_id: int = 1):
        self.plan, self.values, self.tick = plan, values, tick
        self.literal = plan.literal
        self.where: dict[str, Where] = scopes(plan)
        self.page, self.page_size, self.max_steps = page, page_size, max_steps
        self.next_id = first_id
        self.memo: dict[tuple, Step] = {}
        self.truncated = False
        self.shown: set[int] = set()  # steps placed in the tree (later uses refer to them)

    # ---- weights -------------------------------------------------------------------
    def weights(self, key: str, path: tuple, row: tuple, mode: str, tick: int | None = None) -> tuple[int, int | None]:
        tick = self.tick if tick is None else tick
        if mode == "value":
            return self.values.stream(key, tick, path).weight(row), None
        after = self.values.value(key, tick, path).weight(row)
        before = self.values.value(key, tick - 1, path).weight(row) if mode == "change" else None
        return after, before

    def first_iteration(self, key: str, path: tuple, row: tuple, mode: str, tick: int) -> tuple:
        """The earliest iteration from which the row has had the weights it has at `path`."""
        now = self.weights(key, path, row, mode, tick)
        k = path[-1]
        while k > 0 and self.weights(key, path[:-1] + (k - 1,), row, mode, tick) == now:
            k -= 1
        return path[:-1] + (k,)

    # ---- the walk ------------------------------------------------------------------
    def step(self, key: str, path: tuple, row: tuple, mode: str, root: bool = False, tick: int | None = None) -> Step | None:
        tick = self.tick if tick is None else tick
        where = self.where[key]
        entering = where.depth > len(path)  # a fixed point's result, read from outside
        if not entering and path:
            path = self.first_iteration(key, path, row, mode, tick)
        memo_key = (key, path, row, mode, entering, tick)
        if memo_key in self.memo:
            return self.memo[memo_key]
        if len(self.memo) >= self.max_steps:
            self.truncated = True
            return None
        after, before = (self.weights(key, path, row, mode, tick) if not entering
                         else self._settled_weights(key, path, row, mode, tick))
        step = Step(self.next_id, key, "fixedpoint" if entering else where.op.kind, row, mode, after, before,
                    tick=tick, iteration=path, first_iteration=bool(path) and not entering,
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

    def _settled_weights(self, key, path, row, mode, tick):
        k = self._settled(key, path, mode, tick)
        return self.weights(key, path + (k,), row, mode, tick)

    def _settled(self, key: str, prefix: tuple, mode: str, tick: int) -> int:
        last = self.values.last_iteration(key, tick, prefix)
        if mode == "change":
            last = max(last, self.values.last_iteration(key, tick - 1, prefix))
        return max(last, 0)

    def _follow(self, use: Use, parent: Step, mode: str) -> None:
        if self.literal:
            child_mode = "value"
        elif use.changed and (mode == "change" or use.tick is not None):
            child_mode = "change"
        else:
            child_mode = "contents"
        tick = parent.tick if use.tick is None else use.tick
        child = self.step(use.node, use.iteration, use.row, child_mode, tick=tick)
        if child is None:
            use.followed = False
            return
        use.iteration = child.iteration
        if tick != parent.tick:
            use.tick = tick
        if child.id in self.shown:
            use.ref = child.id
        else:
            use.step = child
            self.shown.add(child.id)

    def _groups(self, step: Step, where: Where, key: str, path: tuple, row: tuple, mode: str,
                entering: bool) -> list[Group]:
        kind, tick = where.op.kind, step.tick
        if entering:
            k = self._settled(key, path, mode, tick)
            step.note = f"the fixed point {where.fixedpoint!r} settles at iteration {k}"
            return [self._passing(f"its value at iteration {k}", key, path + (k,), step)]
        if self.literal and not path and mode == "contents":
            step.note = "run as drawn: its contents are the sum of its values at each tick"
            return streams.emitted(row, self.values, key, tick)
        # run as drawn, a change of the contents at a tick is the value then
        rule_mode = "value" if self.literal and mode != "contents" else mode
        if kind == "input":
            step.note = f"the change pushed at tick {tick}" if rule_mode == "value" else "a row of the input table"
            return []
        if kind == "delay" and path:
            k = path[-1]
            if k == 0:
                return []
            step.note = f"z⁻¹: the value of {where.sources['in']!r} at the previous iteration"
            return [self._passing(f"from iteration {k - 1}", where.sources["in"], path[:-1] + (k - 1,), step)]
        if kind in streams.RULES:
            step.note = {"delay": "z⁻¹: the value of its input at the tick before",
                         "integrate": "I: the sum of its input's values so far",
                         "differentiate": "D: its input's value less its value the tick before"}[kind]
            return streams.RULES[kind](row, self.values, where.sources["in"], tick)
        if kind in ("import", "delta0"):
            step.note = "brought into the fixed point from outside"
            return [self._passing("from outside the fixed point", where.sources["in"], path[:-1], step)]
        if kind in PASS_THROUGH:
            if rule_mode == "value" and mode == "change":  # the change of its contents: its value now
                w = self.values.stream(key, tick, path).weight(row)
                return [Group(PASS_THROUGH[kind], [Use("in", row, w, node=where.sources["in"], iteration=path)])]
            return [self._passing(PASS_THROUGH[kind], where.sources["in"], path, step)]
        if kind in windows.KINDS:
            groups = windows.why_window(where.op, row, self.values, where.sources["in"], tick, rule_mode)
            for group in groups:
                for use in group.uses:
                    use.node, use.iteration = where.sources["in"], path
            return groups
        rule = RULES.get(kind)
        if rule is None:
            step.note = f"{kind} rows are not traced further"
            return []
        read = self.values.stream if rule_mode == "value" else self.values.value
        after = {port: read(src, tick, path) for port, src in where.sources.items()}
        before = ({port: self.values.value(src, tick - 1, path) for port, src in where.sources.items()}
                  if rule_mode == "change" else None)
        groups = rule(where.op, row, after, before)
        for group in groups:
            for use in group.uses:
                use.node, use.iteration = where.sources[use.port], path
        return groups

    @staticmethod
    def _passing(label: str, source: str, path: tuple, step: Step) -> Group:
        """The same row in one input (a view, a delay, an import): its weights are the step's."""
        return Group(label, [Use("in", step.row, step.after, step.before, node=source, iteration=path)])
