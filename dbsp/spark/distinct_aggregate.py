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

Values of type double (0.0 = -0.0, NaN) and lists, and aggregates with min/max, keep the
recomputing executor (AggregateDelta).
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..arrow_expr import compile_arrow
from ..aggregates import DISTINCT, LINEAR
from ..types import Column, Schema
from .accumulate import LinearAggregateDelta
from .batch import Batch
from .zsets import WEIGHT, consolidate_arrow

_VALUE = "__dv"  # the value column of a (group, value) pair
_SIGN = "__sign"
#: value types whose equality is the distinct's identity (doubles: 0.0 = -0.0 and NaN; lists: no hashing)
_EXACT_TYPES = ("bigint", "string", "boolean")


class DistinctAggregateDelta(LinearAggregateDelta):
    @classmethod
    def applies(cls, op) -> bool:
        fns = [fn for fn, *_ in op.aggs]
        return (any(fn in DISTINCT for fn in fns) and all(fn in LINEAR or fn in DISTINCT for fn in fns)
                and all(e.type in _EXACT_TYPES for fn, e, _, _ in op.aggs if fn in DISTINCT))

    def __init__(self, ctx, op, schema):
        from .incremental import DistinctDelta

        super().__init__(ctx, op, schema)
        in_schema = op.input_schemas["in"]
        self._in_schema = in_schema
        group = [in_schema.column(g) for g in op.group_by]
        self.present = DistinctDelta(ctx, None, in_schema)  # P = distinct(in)
        self.pairs = []  # one DistinctDelta per distinct expression: V_e
        self._pair_of = {}  # call index -> index in self.pairs
        self._values = []  # per pair trace: (expression, Arrow form or None, Python form)
        texts = {}
        for i, (fn, _, e) in enumerate(self._python):
            if fn not in DISTINCT:
                continue
            text = repr(e)  # (a dataclass: equal expressions, equal text)
            if text not in texts:
                texts[text] = len(self.pairs)
                pair_schema = Schema(tuple(group) + (Column(_VALUE, e.type, True),))
                self.pairs.append(DistinctDelta(ctx, None, pair_schema))
                self._values.append((e, compile_arrow(e), e.to_python(in_schema)))
            self._pair_of[i] = texts[text]

    def _summarise(self, table: pa.Table) -> pa.Table:
        """The linear calls' summary of the change, the distinct calls' columns replaced by
        Σ ±1 and Σ ±v over the (group, value) pairs this change makes appear or disappear."""
        summary = super()._summarise(table)
        moved = self._moved_pairs(table)
        columns = {name: summary[name] for name in summary.column_names}
        for i in self._pair_of:
            columns[self._sums[i]] = pa.repeat(pa.scalar(0, summary.schema.field(self._sums[i]).type), summary.num_rows)
            columns[self._counts[i]] = pa.repeat(pa.scalar(0, pa.int64()), summary.num_rows)
        out = pa.table(columns, schema=self._base_schema)
        if not any(m is not None for m in moved):
            return out
        for i, p in self._pair_of.items():
            crossed = moved[p]
            if crossed is None:
                continue
            # per group: Σ sign (pairs appearing - disappearing), Σ sign·v
            signed = crossed.append_column(_SIGN, pc.multiply_checked(crossed[WEIGHT], crossed[_VALUE])
                                           if crossed.schema.field(_VALUE).type == pa.int64() else
                                           pa.repeat(pa.scalar(0, pa.int64()), crossed.num_rows))
            per_group = signed.group_by(self._keys, use_threads=False).aggregate([(WEIGHT, "sum"), (_SIGN, "sum")])
            out = _add_by_key(out, per_group, self._keys, {self._counts[i]: f"{WEIGHT}_sum", self._sums[i]: f"{_SIGN}_sum"})
        return out

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
            values = arrow(rows) if arrow is not None else pa.array(
                [python(r) for r in zip(*(rows[n].to_pylist() for n in self._in_schema.names))],
                self.ctx.arrow_schema(pairs.schema).field(_VALUE).type)
            projected = pa.table({**{k: rows[k] for k in self._keys}, _VALUE: values, WEIGHT: rows[WEIGHT]})
            projected = projected.filter(pc.is_valid(projected[_VALUE])).cast(self.ctx.arrow_schema(pairs.schema))
            crossed = pairs.step({"in": Batch.of_table(self.ctx, pairs.schema, consolidate_arrow(projected))})
            moved.append(crossed.table() if crossed is not None else None)
        return moved

    def state_rows(self) -> int:
        return self.groups + self.present.state_rows() + sum(p.state_rows() for p in self.pairs)


def _add_by_key(summary: pa.Table, extra: pa.Table, keys: list[str], add: dict[str, str]) -> pa.Table:
    """`summary` with extra's columns (add: summary column -> extra column) added to its
    rows of the same key (NULL-safe; every key of `extra` is in `summary`)."""
    from .zsets import join_codes, with_join_codes

    if not keys:  # a global aggregate: one row each
        columns = {n: summary[n] for n in summary.column_names}
        for target, source in add.items():
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
        columns[target] = pc.add_checked(summary[target], pc.cast(pc.fill_null(joined[source], 0), typ))
    return pa.table(columns, schema=summary.schema)
