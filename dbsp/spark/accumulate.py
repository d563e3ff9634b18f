"""count / sum / avg group-bys: DBSP's per-key accumulator, kept as Arrow columns.

These aggregates are linear, so a group's state is one accumulator, whatever the number
of its rows: Σw (the group's weight), and per aggregate Σ w·e and Σ w over non-NULL e.
For a change Δ: summarise Δ per group (Arrow group-by), fold it into the touched groups'
accumulators, and for each touched group emit -(key, old row) + (key, new row). Same
results as dbsp.aggregates (exactly, for integer columns).

The accumulators live in two parts, as a trace's spine does:
- `base`: an Arrow table (group key columns + accumulator columns), one row per group;
- `acc`: a dict overlay of the groups that small ticks changed since the last fold
  (`None` for a group that emptied).
A small change (fewer than `vector_min_rows` touched groups, or up to
`driver_max_rows` touched groups that are few against all groups) reads its groups' old values
from the overlay or with one vectorised probe of `base`, and writes the overlay: work in
the number of touched groups. A larger change first folds the overlay into `base`, then
runs whole-column: a NULL-safe hash join of the summary with `base` gives old and new
accumulators and the output rows; `base` is rewritten as its untouched rows plus the new
ones. No Python loop over groups on that path.

distinct_aggregate.py extends these accumulators to count/sum/avg(DISTINCT e) (and
min/max beside them): their columns take the (group, value) pairs a change makes appear
or disappear instead of the change's rows.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..numeric import bigint_sum, check_number
from ..zset import ZSet
from .batch import Batch
from .probe import SortedIndex, indexable
from .zsets import WEIGHT, concat, consolidate_arrow, join_codes, null_safe_semi_arrow, with_join_codes

_W = "__w"  # the group's weight, Σw
_EXACT = pa.decimal128(38, 0)
_LINEAR = ("count", "sum", "avg")
FOLD_AT = 100_000  # overlay entries beyond which the overlay is folded into the base


class LinearAggregateDelta:
    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.acc: dict[tuple, list | None] = {}
        self.base: pa.Table | None = None
        self.groups = 0  # groups with an accumulator (base and overlay together)
        self.started = False
        self._index: SortedIndex | None = None  # of `base`, once probed by key
        in_schema = op.input_schemas["in"]
        self._python = [(fn, e.to_python(in_schema) if e else None, e) for fn, e, _, _ in op.aggs]
        self._keys = list(op.group_by)
        self._sums = [f"__s{i}" for i in range(len(op.aggs))]
        self._counts = [f"__n{i}" for i in range(len(op.aggs))]
        key_fields = [f for f in ctx.arrow_schema(in_schema) if f.name in self._keys]
        key_fields.sort(key=lambda f: self._keys.index(f.name))
        sum_types = [pa.float64() if (e is not None and e.type == "double" and fn != "count") else pa.int64()
                     for fn, _, e in self._python]
        self._base_schema = pa.schema([*key_fields, pa.field(_W, pa.int64()),
                                       *[pa.field(s, t) for s, t in zip(self._sums, sum_types)],
                                       *[pa.field(n, pa.int64()) for n in self._counts]])

    @classmethod
    def applies(cls, op) -> bool:
        return all(fn in ("count", "sum", "avg") for fn, *_ in op.aggs)

    # ---- a tick ------------------------------------------------------------------------
    def step(self, inputs):
        d = inputs["in"]
        first, self.started = not self.started, True
        if d is None and not (first and self.op.is_global):
            return None
        summary = self._summarise(d.table()) if d is not None else self._base_schema.empty_table()
        touched = summary.num_rows
        # Whole columns cost O(all groups), by group O(touched groups) in Python.
        by_group = touched <= self.ctx.driver_max_rows and (touched < self.ctx.vector_min_rows or touched * 4 < self.groups)
        if self.op.is_global or by_group:
            self.ctx.took("row")
            return self._by_group(summary)
        self.ctx.took("arrow")
        return self._whole_columns(summary)

    def _by_group(self, summary: pa.Table) -> Batch | None:
        """Few touched groups: old accumulators from the overlay or one probe of the base."""
        width = 1 + 2 * len(self._python)
        parts = {tuple(r[:len(self._keys)]): list(r[len(self._keys):]) for r in zip(*(summary[c].to_pylist() for c in summary.column_names))}
        if self.op.is_global:
            parts.setdefault((), [0] * width)
        old_of = self._old(list(parts))
        out = []
        for key, part in parts.items():
            old = old_of.get(key)
            new = part if old is None else [a + b for a, b in zip(old, part)]
            if old is not None and self._present(old):
                out.append((key + self._row(old), -1))
            if self._present(new):
                out.append((key + self._row(new), 1))
            keep = self.op.is_global or new[0] != 0 or any(new[1:])
            self.groups += int(keep) - int(old is not None)
            self.acc[key] = new if keep else None
        if len(self.acc) > FOLD_AT:
            self.fold()
        return Batch.of_table(self.ctx, self.schema, self.ctx.to_table(ZSet(out), self.schema))

    def _old(self, keys: list[tuple]) -> dict[tuple, list]:
        old, missing = {}, []
        for key in keys:
            if key in self.acc:
                if self.acc[key] is not None:
                    old[key] = self.acc[key]
            else:
                missing.append(key)
        if missing and indexable(self.base, self._keys):  # one group-by column, many groups: binary search
            if self._index is None or self._index.table is not self.base:
                self._index = SortedIndex(self.base, self._keys[0])
                self.base = self._index.table  # the same groups, sorted
            rows = self._index.take(pa.array([k[0] for k in missing], self._base_schema.field(0).type))
            for r in zip(*(rows[c].to_pylist() for c in rows.column_names)):
                old[(r[0],)] = list(r[1:])
        elif missing and self.base is not None and self.base.num_rows:
            mask = None
            for i, name in enumerate(self._keys):
                values = pa.array([k[i] for k in missing], self._base_schema.field(name).type)
                hit = pc.is_in(self.base[name], value_set=values, skip_nulls=False)
                mask = hit if mask is None else pc.and_(mask, hit)
            rows = self.base.filter(mask) if mask is not None else self.base
            wanted = set(missing)
            for r in zip(*(rows[c].to_pylist() for c in rows.column_names)):
                key = tuple(r[:len(self._keys)])
                if key in wanted:  # several key columns: the per-column probe is a superset
                    old[key] = list(r[len(self._keys):])
        return old

    def _whole_columns(self, summary: pa.Table) -> Batch | None:
        """Many touched groups: joins and column arithmetic, no loop over groups."""
        self.fold()
        base = self.base if self.base is not None else self._base_schema.empty_table()
        acc_columns = [_W, *self._sums, *self._counts]
        s, b = with_join_codes(summary, self._keys), with_join_codes(base, self._keys)
        codes = join_codes(self._keys)
        old = b.select(codes + acc_columns).rename_columns(codes + [f"old{c}" for c in acc_columns])
        joined = s.join(old, keys=codes, join_type="left outer", use_threads=False)
        had = pc.is_valid(joined[f"old{_W}"])
        new = {c: pc.add_checked(joined[c], pc.fill_null(joined[f"old{c}"], 0)) for c in acc_columns}
        keys = {k: joined[k] for k in self._keys}
        retract = pa.table({**keys, **{c: joined[f"old{c}"] for c in acc_columns}}).filter(
            pc.and_(had, pc.not_equal(pc.fill_null(joined[f"old{_W}"], 0), 0)))
        insert = pa.table({**keys, **new}).filter(pc.not_equal(new[_W], 0))
        kept = pc.not_equal(new[_W], 0)
        for c in acc_columns[1:]:
            kept = pc.or_(kept, pc.not_equal(new[c], 0))
        updated = pa.table({**keys, **new}).filter(kept).cast(self._base_schema)
        untouched = null_safe_semi_arrow(base, summary, self._keys, anti=True)
        self.base = concat([untouched.cast(self._base_schema), updated])
        self.base = self.base.combine_chunks() if self.base is not None else None
        self.groups = self.base.num_rows if self.base is not None else 0
        out = concat([self._rows_of(retract, -1), self._rows_of(insert, 1)])
        return Batch.of_table(self.ctx, self.schema, consolidate_arrow(out)) if out is not None else None

    def _rows_of(self, accs: pa.Table, weight: int) -> pa.Table:
        """Output rows (group key + aggregate values) of accumulator rows, with `weight`."""
        target = self.ctx.arrow_schema(self.schema)
        columns = [accs[k] for k in self._keys]
        for i, (fn, _, e) in enumerate(self._python):
            s, n = accs[self._sums[i]], accs[self._counts[i]]
            none = pc.equal(n, 0)
            if fn == "count":
                value = accs[_W] if e is None else n
            elif fn == "count_distinct":
                value = n
            elif fn in ("sum", "sum_distinct", "min", "max"):
                value = pc.if_else(none, pa.scalar(None, s.type), s)
            else:  # avg, avg_distinct
                value = pc.if_else(none, pa.scalar(None, pa.float64()),
                                   pc.divide(pc.cast(s, pa.float64()), pc.cast(pc.if_else(none, 1, n), pa.float64())))
            columns.append(value)
        columns.append(pa.repeat(pa.scalar(weight, pa.int64()), accs.num_rows))
        return pa.Table.from_arrays([c.cast(f.type) for c, f in zip(columns, target)], schema=target)

    # ---- the state -----------------------------------------------------------------------
    def fold(self) -> None:
        """Move the overlay into the base (a global aggregate has one group: it stays put)."""
        if not self.acc or not self._keys:
            return
        keys = list(self.acc)
        n = len(self._keys)
        changed = pa.Table.from_arrays(
            [pa.array([k[i] for k in keys], self._base_schema.field(i).type) for i in range(n)],
            names=self._keys)
        live = [(k, v) for k, v in self.acc.items() if v is not None]
        fresh = pa.Table.from_arrays(
            [pa.array([k[i] for k, _ in live], f.type) for i, f in enumerate(self._base_schema) if i < n] +
            [pa.array([v[j] for _, v in live], f.type) for j, f in enumerate(list(self._base_schema)[n:])],
            schema=self._base_schema)
        if self.base is not None and self.base.num_rows:
            untouched = null_safe_semi_arrow(self.base, changed, self._keys, anti=True)
            self.base = concat([untouched.cast(self._base_schema), fresh])
        else:
            self.base = fresh
        self.base = self.base.combine_chunks() if self.base is not None else None
        self.acc = {}
        self.groups = self.base.num_rows if self.base is not None else 0

    def keep_groups(self, keep) -> None:
        """Drop the groups whose accumulator row `keep(table) -> boolean array` rejects
        (windows release closed windows this way)."""
        self.fold()
        if self.base is not None:
            self.base = self.base.filter(keep(self.base))
            self.groups = self.base.num_rows

    def state_rows(self) -> int:
        return self.groups

    # ---- values -------------------------------------------------------------------------
    def _present(self, acc) -> bool:
        return self.op.is_global or acc[0] != 0

    def _row(self, acc) -> tuple:
        values = []
        for i, (fn, _, e) in enumerate(self._python):
            s, n = acc[1 + i], acc[1 + len(self._python) + i]
            if fn == "count":
                values.append(acc[0] if e is None else n)
            elif fn == "count_distinct":
                values.append(n)
            elif fn in ("sum", "sum_distinct", "min", "max"):
                if fn == "sum_distinct" and n:  # (Python ints: the accumulators do not wrap)
                    check_number(s, e.type, e.where, f"{fn}()")
                values.append((0 if self.op.is_global and fn == "sum" else None) if n == 0 else s)
            else:  # avg, avg_distinct
                if fn == "avg_distinct" and n:
                    check_number(s, e.type, e.where, f"{fn}()")
                values.append(None if n == 0 else float(s) / n)
        return tuple(values)

    def _summarise(self, table: pa.Table) -> pa.Table:
        """Per group of this change: key, Σw, Σ w·e_i, Σ w[e_i not null] (Arrow group-by)."""
        names = self.op.input_schemas["in"].names
        w = table[WEIGHT]
        sums, counts, rows = {}, {}, None
        for i, (fn, f, e) in enumerate(self._python):
            if fn not in _LINEAR:
                continue  # (the distinct calls' and extremes' columns: distinct_aggregate.py fills them)
            target = self._base_schema.field(self._sums[i]).type
            if e is None:
                values = None
            elif e.op == "col":
                values = table[e.value]
            else:
                rows = rows if rows is not None else list(zip(*(table[n].to_pylist() for n in names)))
                values = pa.array([f(r) for r in rows], target if fn != "count" else None)
            zeros = pa.repeat(pa.scalar(0, target), table.num_rows)
            if values is None:
                sums[self._sums[i]], counts[self._counts[i]] = zeros, pa.repeat(pa.scalar(0, pa.int64()), table.num_rows)
                continue
            counts[self._counts[i]] = pc.if_else(pc.is_null(values), 0, w)
            sums[self._sums[i]] = zeros if fn == "count" else pc.multiply_checked(pc.cast(values, target), pc.cast(w, target))
            if target == pa.int64():  # summed exactly: Arrow's int64 sum wraps past 64 bits
                sums[self._sums[i]] = pc.cast(sums[self._sums[i]], _EXACT)
        # (only the linear calls' columns are summed: the others are filled by subclasses,
        # distinct_aggregate.py, and start at 0, or NULL for an extremum's value)
        summed = [_W, *[c for i, c in enumerate(self._sums) if self._python[i][0] in _LINEAR],
                  *[c for i, c in enumerate(self._counts) if self._python[i][0] in _LINEAR]]
        keyed = pa.table({**{k: table[k] for k in self._keys}, **{c: ({_W: w} | sums | counts)[c] for c in summed}})
        grouped = keyed.group_by(self._keys, use_threads=False).aggregate([(c, "sum") for c in summed])
        grouped = grouped.select([*self._keys, *[f"{c}_sum" for c in summed]]).rename_columns([*self._keys, *summed])
        for name in self._sums:
            if name in summed and grouped[name].type == _EXACT:
                grouped = grouped.set_column(grouped.column_names.index(name), name, bigint_sum(grouped[name]))
        n = grouped.num_rows
        return pa.Table.from_arrays([grouped[f.name] if i < len(self._keys) else pc.fill_null(grouped[f.name], 0) if f.name in summed
                                     else pa.repeat(pa.scalar(0, f.type), n) if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
                                     else pa.nulls(n, f.type) for i, f in enumerate(self._base_schema)], schema=self._base_schema)
