"""count / sum / avg (DISTINCT e) group-bys, incrementally: work in the change, not the group.

dbsp.aggregates defines count_distinct(e) over a group as the number of distinct non-NULL
e(x) among the group's rows x with weight w > 0 (sum_distinct / avg_distinct: their sum
and average). That is a linear aggregate of a distinct of a distinct:
    P       = distinct(in)                      the rows with w > 0, each once
    V_e     = distinct(π_{group, e}(P))          where e(x) is not NULL: the (group, value)
                                                pairs present, each once
    count_distinct(e) = Σ_{V_e, group} 1,   sum_distinct(e) = Σ_{V_e, group} v
and distinct's Δ form (DBSP: H(I(Δ)_{t-1}, Δ), `DistinctDelta`) emits only the rows
whose integrated weight crosses 0 ↔ positive. So a tick's change ΔP gives ΔV_e, the
pairs appearing (+1) and disappearing (-1), and each group's count moves by the pairs
appearing minus those disappearing, its sum by their values: per-group accumulators,
as LinearAggregateDelta keeps for count/sum/avg, into which these Σ ±1 and Σ ±v fold.
(The first distinct keeps the reference's "rows with w > 0" exact when an integral
holds negative weights, as a difference's output can; for a table it passes the change
through, one weight lookup per changed row.)

State: I(Δin) as a trace of whole rows (P's), one trace of (group, value) multiplicities
per distinct expression (V_e's, shared by calls over the same expression), and the
accumulators (accumulate.py). Each distinct runs DistinctDelta's own paths: row by row
for a small change, Arrow for a larger one, a Spark lookup of old weights past
`arrow_max_rows`, and its trace spills to Spark levels as any trace does. Output: for each
touched group, -(key, old row) + (key, new row), as every aggregate.

min(e) / max(e) beside a distinct aggregate use the same pairs V_e (min and max are over
the values present): the accumulator holds the extreme and the number of values present;
a tick's appearing values can only improve it, and only a group whose extreme leaves
looks its values up in V_e's trace (one lookup for all such groups). Such an aggregate
combines group by group on the driver (the accumulators' Python form, work in the
touched groups) rather than by whole columns.

Values of type double (0.0 = -0.0, NaN) and lists, min/max without a distinct aggregate
beside them, and windows (their garbage collection drops I(in)) keep the recomputing
executor (AggregateDelta).
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..arrow_expr import compile_arrow
from ..aggregates import DISTINCT, LINEAR
from ..numeric import bigint_sum
from ..types import Column, Schema
from .accumulate import LinearAggregateDelta
from .batch import Batch
from .zsets import WEIGHT, consolidate_arrow

_VALUE = "__dv"  # the value column of a (group, value) pair
_SIGN = "__sign"
_EXACT = pa.decimal128(38, 0)
#: value types whose equality is the distinct's identity (doubles: 0.0 = -0.0 and NaN; lists: no hashing)
_EXACT_TYPES = ("bigint", "string", "boolean", "date", "timestamp")
EXTREMES = ("min", "max")
#: the functions over the (group, value) pairs present
PAIRED = DISTINCT | set(EXTREMES)


class DistinctAggregateDelta(LinearAggregateDelta):
    @classmethod
    def applies(cls, op) -> bool:
        fns = [fn for fn, *_ in op.aggs]
        return (any(fn in DISTINCT for fn in fns) and all(fn in LINEAR or fn in PAIRED for fn in fns)
                and all(e.type in _EXACT_TYPES for fn, e, _, _ in op.aggs if fn in PAIRED))

    def __init__(self, ctx, op, schema, distinct_delta):
        """`distinct_delta`: distinct's Δ executor class (incremental.DistinctDelta, which
        imports this module)."""
        super().__init__(ctx, op, schema)
        in_schema = op.input_schemas["in"]
        # an extreme's accumulator: (the value, the number of values present)
        self._extremes = [i for i, (fn, _, _) in enumerate(self._python) if fn in EXTREMES]
        fields = list(self._base_schema)
        for i in self._extremes:
            at = self._base_schema.get_field_index(self._sums[i])
            fields[at] = pa.field(self._sums[i], ctx.arrow_schema(Schema((Column("v", self._python[i][2].type, True),))).field(0).type)
        self._base_schema = pa.schema(fields)
        self._gone: dict[int, dict] = {}  # this tick: per extreme call, group -> the extreme of the values leaving
        self._in_schema = in_schema
        group = [in_schema.column(g) for g in op.group_by]
        self.present = distinct_delta(ctx, None, in_schema)  # P = distinct(in)
        self.pairs = []  # one DistinctDelta per distinct expression: V_e
        self._pair_of = {}  # call index -> index in self.pairs
        self._values = []  # per pair trace: (expression, Arrow form or None, Python form)
        texts = {}
        for i, (fn, _, e) in enumerate(self._python):
            if fn not in PAIRED:
                continue
            text = repr(e)  # (a dataclass: equal expressions, equal text)
            if text not in texts:
                texts[text] = len(self.pairs)
                pair_schema = Schema(tuple(group) + (Column(_VALUE, e.type, True),))
                self.pairs.append(distinct_delta(ctx, None, pair_schema))
                self._values.append((e, compile_arrow(e), e.to_python(in_schema)))
            self._pair_of[i] = texts[text]

    def _summarise(self, table: pa.Table) -> pa.Table:
        """The linear calls' summary of the change, the distinct calls' columns replaced by
        Σ ±1 and Σ ±v over the (group, value) pairs this change makes appear or disappear."""
        summary = super()._summarise(table)
        moved = self._moved_pairs(table)
        columns = {name: summary[name] for name in summary.column_names}
        for i in self._extremes:  # (no value appearing: NULL, not 0)
            columns[self._sums[i]] = pa.nulls(summary.num_rows, self._base_schema.field(self._sums[i]).type)
        out = pa.table(columns, schema=self._base_schema)
        self._gone = {i: {} for i in self._extremes}
        if not any(m is not None for m in moved):
            return out
        for i, p in self._pair_of.items():
            crossed = moved[p]
            if crossed is None:
                continue
            if i in self._extremes:
                out = self._extreme_moves(out, i, crossed)
                continue
            # per group: Σ sign (pairs appearing - disappearing), Σ sign·v
            signed = crossed.append_column(_SIGN, pc.cast(pc.multiply_checked(crossed[WEIGHT], crossed[_VALUE]), _EXACT)
                                           if crossed.schema.field(_VALUE).type == pa.int64() else
                                           pa.repeat(pa.scalar(0, _EXACT), crossed.num_rows))
            per_group = signed.group_by(self._keys, use_threads=False).aggregate([(WEIGHT, "sum"), (_SIGN, "sum")])
            per_group = per_group.set_column(per_group.column_names.index(f"{_SIGN}_sum"), f"{_SIGN}_sum",
                                             bigint_sum(per_group[f"{_SIGN}_sum"]))  # (exact: int64 sums wrap)
            out = _add_by_key(out, per_group, self._keys, {self._counts[i]: f"{WEIGHT}_sum", self._sums[i]: f"{_SIGN}_sum"})
        return out

    def _extreme_moves(self, summary: pa.Table, i: int, crossed: pa.Table) -> pa.Table:
        """An extreme's part of the summary: per group, the number of values appearing
        minus those leaving, and the extreme of those appearing; the extreme of those
        leaving goes to self._gone (compared with the old extreme in _by_group)."""
        fn = self._python[i][0]
        agg = "min" if fn == "min" else "max"
        appearing = crossed.filter(pc.greater(crossed[WEIGHT], 0))
        leaving = crossed.filter(pc.less(crossed[WEIGHT], 0))
        moved = crossed.group_by(self._keys, use_threads=False).aggregate([(WEIGHT, "sum")])
        if appearing.num_rows:
            best = appearing.group_by(self._keys, use_threads=False).aggregate([(_VALUE, agg)])
            summary = _add_by_key(summary, best, self._keys, {self._sums[i]: f"{_VALUE}_{agg}"}, replace=True)
        summary = _add_by_key(summary, moved, self._keys, {self._counts[i]: f"{WEIGHT}_sum"})
        if leaving.num_rows:
            gone = leaving.group_by(self._keys, use_threads=False).aggregate([(_VALUE, agg)])
            for r in zip(*(gone[c].to_pylist() for c in [*self._keys, f"{_VALUE}_{agg}"])):
                self._gone[i][tuple(r[:-1])] = r[-1]
        return summary

    def _whole_columns(self, summary: pa.Table):
        """Extremes combine group by group (an extreme leaving looks its group's values up)."""
        if self._extremes:
            self.ctx.took("row")
            return self._by_group(summary)
        return super()._whole_columns(summary)

    def _by_group(self, summary: pa.Table):
        if not self._extremes:
            return super()._by_group(summary)
        from ..zset import ZSet

        k, m = len(self._keys), len(self._python)
        parts = {tuple(r[:k]): list(r[k:]) for r in zip(*(summary[c].to_pylist() for c in summary.column_names))}
        if self.op.is_global:
            parts.setdefault((), [0] + [None if j - 1 in self._extremes else 0 for j in range(1, 1 + m)] + [0] * m)
        old_of = self._old(list(parts))
        news, lookups = {}, {i: [] for i in self._extremes}
        for key, part in parts.items():
            old = old_of.get(key)
            new = [a + b if j - 1 not in self._extremes else None for j, (a, b) in enumerate(zip(old, part))] if old is not None else list(part)
            for i in self._extremes:
                s_at, n_at = 1 + i, 1 + m + i
                appear, gone, before = part[s_at], self._gone.get(i, {}).get(key), old[s_at] if old is not None else None
                if new[n_at] == 0:
                    new[s_at] = None
                elif before is None:
                    new[s_at] = appear
                elif gone is not None and gone == before:  # the extreme left: the group's values looked up
                    lookups[i].append(key)
                elif appear is None:
                    new[s_at] = before
                else:
                    new[s_at] = min(before, appear) if self._python[i][0] == "min" else max(before, appear)
            news[key] = new
        for i, keys in lookups.items():
            if keys:
                for key, value in self._extremes_of(i, keys).items():
                    news[key][1 + i] = value
        out = []
        for key, new in news.items():
            old = old_of.get(key)
            if old is not None and self._present(old):
                out.append((key + self._row(old), -1))
            if self._present(new):
                out.append((key + self._row(new), 1))
            keep = self.op.is_global or new[0] != 0 or any(v not in (0, None) for v in new[1:])
            self.groups += int(keep) - int(old is not None)
            self.acc[key] = new if keep else None
        if len(self.acc) > 100_000:
            self.fold()
        return Batch.of_table(self.ctx, self.schema, self.ctx.to_table(ZSet(out), self.schema))

    def _extremes_of(self, i: int, keys: list[tuple]) -> dict:
        """The extreme of call i over its values present, for these groups (after this tick)."""
        trace = self.pairs[self._pair_of[i]].trace
        if self._keys:
            rows = trace.lookup(self._keys, keys)
        else:
            rows = consolidate_arrow(trace.recent) if not trace.levels and trace.recent is not None else trace.snapshot_table()
        if rows is None or rows.num_rows == 0:
            return {}
        agg = self._python[i][0]
        best = rows.filter(pc.greater(rows[WEIGHT], 0)).group_by(self._keys, use_threads=False).aggregate([(_VALUE, agg)])
        return {tuple(r[:-1]): r[-1] for r in zip(*(best[c].to_pylist() for c in [*self._keys, f"{_VALUE}_{agg}"]))}

    def _moved_pairs(self, table: pa.Table) -> list:
        """ΔV_e for every distinct expression: (group, value, ±1) tables, or None."""
        change = Batch.of_table(self.ctx, self._in_schema, consolidate_arrow(table))
        present = self.present.step({"in": change})  # ΔP: rows whose weight crossed 0
        moved = []
        for pairs, (e, arrow, python) in zip(self.pairs, self._values):
            if present is None:
                moved.append(None)
                continue
            rows = present.table()
            values = rows[e.value] if e.op == "col" else arrow(rows) if arrow is not None else pa.array(
                [python(r) for r in zip(*(rows[n].to_pylist() for n in self._in_schema.names))],
                self.ctx.arrow_schema(pairs.schema).field(_VALUE).type)
            projected = pa.table({**{k: rows[k] for k in self._keys}, _VALUE: values, WEIGHT: rows[WEIGHT]})
            projected = projected.filter(pc.is_valid(projected[_VALUE])).cast(self.ctx.arrow_schema(pairs.schema))
            crossed = pairs.step({"in": Batch.of_table(self.ctx, pairs.schema, consolidate_arrow(projected))})
            moved.append(crossed.table() if crossed is not None else None)
        return moved

    def state_rows(self) -> int:
        return self.groups + self.present.state_rows() + sum(p.state_rows() for p in self.pairs)


def _add_by_key(summary: pa.Table, extra: pa.Table, keys: list[str], add: dict[str, str], replace: bool = False) -> pa.Table:
    """`summary` with extra's columns (add: summary column -> extra column) added to its
    rows of the same key (NULL-safe; every key of `extra` is in `summary`), or put in
    place of them (`replace`: NULL where extra has no row)."""
    from .zsets import join_codes, with_join_codes

    if not keys:  # a global aggregate: one row each
        columns = {n: summary[n] for n in summary.column_names}
        for target, source in add.items():
            if replace:
                columns[target] = extra[source].cast(summary.schema.field(target).type)
                continue
            total = pc.sum(extra[source]).as_py() or 0
            columns[target] = pc.add_checked(summary[target], pa.scalar(total, summary.schema.field(target).type))
        return pa.table(columns, schema=summary.schema)
    codes = join_codes(keys)
    s = with_join_codes(summary, keys).append_column("__at", pa.array(range(summary.num_rows), pa.int64()))
    x = with_join_codes(extra, keys).select(codes + list(add.values()))
    joined = s.select(codes + ["__at"]).join(x, keys=codes, join_type="left outer", use_threads=False).sort_by("__at")
    columns = {n: summary[n] for n in summary.column_names}
    for target, source in add.items():
        typ = summary.schema.field(target).type
        if replace:
            columns[target] = pc.cast(joined[source], typ)
            continue
        columns[target] = pc.add_checked(summary[target], pc.cast(pc.fill_null(joined[source], 0), typ))
    return pa.table(columns, schema=summary.schema)
