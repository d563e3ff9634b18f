"""window_aggregate: aggregates over a frame of neighbouring rows, SQL's
`AGG(e) OVER (PARTITION BY p ORDER BY o ROWS|RANGE BETWEEN ... AND ...)`.

Math: within each partition (the `group_by` columns), the rows present (w > 0), a row of
weight w counted as w rows, in order — `order_by` columns, ASC with NULLs first or DESC
with NULLs last, then the remaining columns ascending as a tie-break so the order is
total (as top_k). Row i of n keeps its columns and gains, for each aggregate, its
function (count, sum, avg, min, max: dbsp.aggregates) over the rows of its frame:
  - `rows`:  positions i + start .. i + end, clipped to 0 .. n-1
             (`start`/`end` offsets: negative preceding, 0 the row itself, positive
             following; null: unbounded);
  - `range`: from the first row (start null) or the first of i's peers (start 0) to the
             last of i's peers (end 0) or the last row (end null); peers are the rows with
             equal `order_by` values (without `order_by`, every row of the partition).
An empty frame gives count 0 and NULL for the others. Each output row has weight 1.
Not linear. Incremental form, as aggregate and top_k: for every partition touched by
Δin, retract its old rows and insert its new ones. State: I(Δin) indexed by the
partition key.
Params: `group_by` (may be empty), `order_by`: [{"column": c, "desc": bool}] (may be
empty: then the frame is the whole partition), `frame`: {"unit": "rows"|"range",
"start": int|null, "end": int|null}, `aggregates`: [{"fn": count|sum|avg|min|max,
"expr": "price", "as": "name"}] (`expr` optional for count: COUNT(*)).
"""
from __future__ import annotations

import functools
from collections import deque

from .. import numeric
from ..aggregates import python_aggregate
from ..types import Column, Schema, element_type
from ..zset import ZSet
from .aggregate import aggregate_calls
from .base import Grouped
from .top_k import compare_rows, order_param

FUNCTIONS = ("count", "sum", "avg", "min", "max")
UNITS = ("rows", "range")


class WindowAggregate(Grouped):
    kind = "window_aggregate"
    title = "Window aggregate (OVER)"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        problems = []
        self.group_by = self.columns_param("group_by", schema, problems, allow_empty=True)
        self.order = order_param(self, schema, problems, required=False)
        self.unit, self.start, self.end = self._frame(problems)
        self.aggs = self._aggregates(schema, problems)
        if problems:
            return problems
        ordered = {c for c, _ in self.order}
        self.tie_break = [c for c in schema.names if c not in ordered]
        self.output_schema = Schema(schema.columns + tuple(Column(name, rtype, fn != "count") for fn, _, name, rtype in self.aggs))
        names = schema.names
        self._keys = [names.index(g) for g in self.group_by]
        self._peers = [names.index(c) for c, _ in self.order]
        self._sort = [(names.index(c), desc) for c, desc in self.order] + [(names.index(c), False) for c in self.tie_break]
        self._lists = {i for i, c in enumerate(schema.columns) if element_type(c.type) is not None}
        self._fns = [(fn, e.to_python(schema) if e else (lambda r: 1), rtype) for fn, e, _, rtype in self.aggs]
        self._where = numeric.node_label(self.node_id, self.kind)
        return []

    def _frame(self, problems) -> tuple[str, int | None, int | None]:
        frame = self.params.get("frame", {"unit": "range", "start": None, "end": 0 if self.params.get("order_by") else None})
        if not isinstance(frame, dict):
            problems.append(self.problem("parameter 'frame' must be {unit, start, end}", param="frame"))
            return "rows", None, None
        unit, start, end = frame.get("unit"), frame.get("start"), frame.get("end")
        if unit not in UNITS:
            problems.append(self.problem(f"frame: unit must be one of {', '.join(UNITS)}, got {unit!r}", param="frame"))
            return "rows", None, None
        for label, bound in (("start", start), ("end", end)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
                problems.append(self.problem(f"frame: {label} must be an integer offset or null (unbounded), got {bound!r}", param="frame"))
                return unit, None, None
        if unit == "range" and (start not in (None, 0) or end not in (None, 0)):
            problems.append(self.problem("frame: a range frame goes from UNBOUNDED PRECEDING or CURRENT ROW to CURRENT ROW or "
                                         "UNBOUNDED FOLLOWING (offsets need a rows frame)", param="frame"))
        elif start is not None and end is not None and start > end:
            problems.append(self.problem(f"frame: start ({start}) is after end ({end})", param="frame"))
        elif unit == "rows" and not self.params.get("order_by") and (start, end) != (None, None):
            problems.append(self.problem("frame: a rows frame other than the whole partition needs order_by", param="frame"))
        return unit, start, end

    def _aggregates(self, schema, problems) -> list:
        raw = self.params.get("aggregates")
        if not isinstance(raw, list) or not raw:
            problems.append(self.problem("parameter 'aggregates' must be a non-empty list of {fn, expr, as}", param="aggregates"))
            return []
        return aggregate_calls(self, raw, schema, problems, FUNCTIONS, taken=set(schema.names))

    # ---- the reference ---------------------------------------------------------------
    def query(self, inputs):
        groups: dict[tuple, list] = {}
        for row, w in inputs["in"]:
            if w > 0:
                groups.setdefault(tuple(row[i] for i in self._keys), []).append((row, w))
        out: dict[tuple, int] = {}
        for rows in groups.values():
            rows.sort(key=functools.cmp_to_key(lambda p, q: compare_rows(self._sort, self._lists, p[0], q[0])))
            ordered = [tuple(row) for row, w in rows for _ in range(w)]
            bounds = self._bounds(ordered)
            columns = [self._over(fn, [f(r) for r in ordered], bounds, rtype) for fn, f, rtype in self._fns]
            for i, row in enumerate(ordered):
                key = row + tuple(c[i] for c in columns)
                out[key] = out.get(key, 0) + 1
        return ZSet(list(out.items()))

    def _bounds(self, ordered: list[tuple]) -> list[tuple[int, int]]:
        """Each row's frame as positions lo .. hi (lo > hi: empty)."""
        n = len(ordered)
        if self.unit == "rows":
            return [(0 if self.start is None else max(0, i + self.start), n - 1 if self.end is None else min(n - 1, i + self.end))
                    for i in range(n)]
        first, last = [0] * n, [n - 1] * n  # each row's first and last peer
        for i in range(1, n):
            first[i] = first[i - 1] if self._peer(ordered[i - 1], ordered[i]) else i
        for i in range(n - 2, -1, -1):
            last[i] = last[i + 1] if self._peer(ordered[i], ordered[i + 1]) else i
        return [(0 if self.start is None else first[i], n - 1 if self.end is None else last[i]) for i in range(n)]

    def _peer(self, a: tuple, b: tuple) -> bool:
        return all(a[i] == b[i] for i in self._peers)

    def _over(self, fn: str, values: list, bounds: list[tuple[int, int]], rtype: str) -> list:
        """fn over each frame. Frames only move forward (lo and hi never decrease), so
        count/sum keep running totals (a double summed left to right over each frame, as
        Spark does) and min/max a monotonic queue."""
        if fn in ("min", "max"):
            return _extremes(values, bounds, min if fn == "min" else max)
        if fn == "count" or rtype == "bigint" or (fn == "avg" and all(isinstance(v, int) for v in values if v is not None)):
            counts, sums = [0], [0]
            for v in values:
                counts.append(counts[-1] + (v is not None))
                sums.append(sums[-1] + (v if v is not None and fn != "count" else 0))
            out = []
            for lo, hi in bounds:
                n = counts[hi + 1] - counts[lo] if lo <= hi else 0
                if fn == "count":
                    out.append(n)
                    continue
                total = sums[hi + 1] - sums[lo] if lo <= hi else 0
                numeric.check_number(total, "bigint", self._where, f"{fn}()")
                out.append(None if n == 0 else total if fn == "sum" else float(total) / n)
            return out
        out = []  # doubles: each frame summed left to right (from the first row: one running sum)
        if self.start is None:
            running, counts = [None], [0]
            for v in values:
                running.append(running[-1] if v is None else v if running[-1] is None else running[-1] + v)
                counts.append(counts[-1] + (v is not None))
            for lo, hi in bounds:
                n, total = (counts[hi + 1], running[hi + 1]) if lo <= hi else (0, None)
                value = None if n == 0 else total if fn == "sum" else total / n
                out.append(numeric.check_number(value, "double", self._where, f"{fn}()"))
            return out
        for lo, hi in bounds:
            value = python_aggregate(fn, [(v, 1) for v in values[lo:hi + 1]], False) if lo <= hi else None
            out.append(numeric.check_number(value, "double", self._where, f"{fn}()"))
        return out

    # ---- Spark -------------------------------------------------------------------------
    def spark(self, ctx, inputs):
        return self.spark_recompute(inputs["in"])

    def spark_recompute(self, df):
        """The same with Spark's window functions over the rows present, each repeated by its weight."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        from ..frames import WEIGHT, consolidate

        names = [c for c in df.columns if c != WEIGHT]
        present = consolidate(df).where(F.col(WEIGHT) > 0)
        copies = present.withColumn("__copy", F.explode(F.sequence(F.lit(1).cast("long"), F.col(WEIGHT).cast("long"))))
        order = [F.col(c).desc_nulls_last() if desc else F.col(c).asc_nulls_first() for c, desc in self.order]
        if self.unit == "rows":
            order += [F.col(c).asc_nulls_first() for c in self.tie_break]
        window = Window.partitionBy(*self.group_by)
        if order:
            window = window.orderBy(*order)
        lo = Window.unboundedPreceding if self.start is None else self.start
        hi = Window.unboundedFollowing if self.end is None else self.end
        if self.unit == "rows":
            window = window.rowsBetween(lo, hi)
        elif order:
            window = window.rangeBetween(lo, hi)
        else:  # no ORDER BY: every row is a peer, the frame is the whole partition
            window = window.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        aggs = [self._spark_over(fn, e, rtype, window).alias(name) for fn, e, name, rtype in self.aggs]
        return copies.select(*names, *aggs, F.lit(1).cast("long").alias(WEIGHT))

    def _spark_over(self, fn, e, rtype, window):
        from pyspark.sql import functions as F

        where = self._where
        if fn == "count":
            return F.count(e.to_spark() if e else F.lit(1)).over(window).cast("long")
        x = e.to_spark()
        if fn in ("min", "max"):
            return (F.min(x) if fn == "min" else F.max(x)).over(window)
        n = F.count(x).over(window)
        if e.type == "bigint":
            total = F.try_sum(x).over(window)
            message = str(numeric.ValueOutOfRange(where, f"{fn}() gave a value outside the bigint range (64 bits)"))
            total = F.when(total.isNull() & (n > 0), F.raise_error(F.lit(message)).cast("long")).otherwise(total)
        else:
            total = numeric.spark_checked(F.sum(x).over(window), "double", where, f"{fn}()")
        if fn == "sum":
            return F.when(n > 0, total).cast(rtype)
        return numeric.spark_checked(F.when(n > 0, total.cast("double") / n.cast("double")), "double", where, "avg")

    def describe_state(self):
        return ["I(in), indexed by the partition key"]


def _extremes(values: list, bounds: list[tuple[int, int]], pick) -> list:
    """min or max over each frame [lo, hi] of `values` (NULLs skipped), lo and hi never
    decreasing: a queue of candidate positions whose values only get worse."""
    out, queue, added = [], deque(), 0
    for lo, hi in bounds:
        while added <= hi:
            v = values[added]
            if v is not None:
                while queue and pick(values[queue[-1]], v) == v and values[queue[-1]] != v:
                    queue.pop()
                queue.append(added)
            added += 1
        while queue and queue[0] < lo:
            queue.popleft()
        out.append(values[queue[0]] if queue and lo <= hi else None)
    return out
