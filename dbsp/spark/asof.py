"""The incremental form of asof_join (dbsp/operators/asof_join.py):

    Δout = asof(Δa, b_t) + Σ_{k in keys(Δb)} [asof(a_{t-1}|k, b_t) - asof(a_{t-1}|k, b_{t-1})]

asof is linear in its left side for a fixed right side, so a left change is matched
against the right side as it now stands; a right change re-matches, for each key it
touches, the left rows of that key only (old matches retracted, new ones inserted).
State: I(a) by the left keys, I(b) by the right keys.

Paths, as the other executors pick them: a change of at most `driver_max_rows` rows is
matched on the driver (the rows of the touched keys fetched from each trace, then the
operator's own `query`); a larger one runs as Spark jobs (`spark_asof` over the traces'
rows of the touched keys).
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..zset import ZSet
from .batch import Batch
from .trace import Trace
from .zsets import negate, null_safe_semi, union_all


class AsofJoinDelta:
    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.left = Trace(ctx, op.input_schemas["left"], key=op.left_keys)
        self.right = Trace(ctx, op.input_schemas["right"], key=op.right_keys)

    def step(self, inputs):
        da, db = inputs["left"], inputs["right"]
        if da is None and db is None:
            return None
        rows = sum(v.table().num_rows for v in (da, db) if v is not None)
        if rows <= self.ctx.driver_max_rows:
            self.ctx.took("row")
            out = self._on_driver(da, db)
        else:
            self.ctx.took("spark")
            out = self._on_spark(da, db)
        if da is not None:
            self.left.add(da.table())
        if db is not None:
            self.right.add(db.table())
        return out

    def _keys(self, table: pa.Table, columns: list[str], named: list[str], side: str) -> pa.Table:
        """A change's distinct keys without NULLs (a NULL key never matches), named `named`
        and typed as `side`'s key columns."""
        keys = table.select(columns)
        valid = None
        for c in columns:
            valid = pc.is_valid(keys[c]) if valid is None else pc.and_(valid, pc.is_valid(keys[c]))
        target = self.ctx.arrow_schema(self.op.input_schemas[side])
        keys = keys.filter(valid).group_by(columns, use_threads=False).aggregate([]).select(columns).rename_columns(named)
        return keys.cast(pa.schema([target.field(c) for c in named]))

    def _touched(self, da, db) -> pa.Table:
        """The right keys either change touches (the right rows to fetch)."""
        op = self.op
        touched = [self._keys(v.table(), keys, op.right_keys, "right")
                   for v, keys in ((da, op.left_keys), (db, op.right_keys)) if v is not None]
        return pa.concat_tables(touched).group_by(op.right_keys, use_threads=False).aggregate([]).select(op.right_keys)

    def _on_driver(self, da, db):
        ctx, op = self.ctx, self.op
        lschema, rschema = op.input_schemas["left"], op.input_schemas["right"]
        wanted = self._touched(da, db)
        found = self.right.lookup(op.right_keys, wanted) if wanted.num_rows else None  # b_{t-1} of every touched key
        b_old = ctx.to_zset_table(found, rschema) if found is not None else ZSet()
        zb = ctx.to_zset(db)
        b_new = b_old + zb
        out = op.query({"left": ctx.to_zset(da), "right": b_new}) if da is not None else ZSet()
        if db is not None:
            moved = self._keys(db.table(), op.right_keys, op.left_keys, "left")
            old = self.left.lookup(op.left_keys, moved) if moved.num_rows else None  # a_{t-1} of b's changed keys
            if old is not None:
                a_old = ctx.to_zset_table(old, lschema)
                out = out + op.query({"left": a_old, "right": b_new}) - op.query({"left": a_old, "right": b_old})
        return Batch.of_table(ctx, self.schema, ctx.to_table(out, self.schema)) if out else None

    def _on_spark(self, da, db):
        op, ctx = self.op, self.ctx
        lschema, rschema = op.input_schemas["left"], op.input_schemas["right"]
        wanted = self._touched(da, db)
        keys_df = ctx.spark.createDataFrame(wanted, schema=ctx.spark_struct(rschema, op.right_keys))
        state = self.right.df()
        b_old = null_safe_semi(state, keys_df, op.right_keys) if state is not None else None
        b_new = union_all([b_old, db.df() if db is not None else None])
        parts = []
        if da is not None:
            parts.append(op.spark_asof(da.df(), b_new if b_new is not None else ctx.empty(rschema)))
        left_state = self.left.df()
        if db is not None and left_state is not None:
            moved = self._keys(db.table(), op.right_keys, op.left_keys, "left")
            moved_df = ctx.spark.createDataFrame(moved, schema=ctx.spark_struct(lschema, op.left_keys))
            a_old = null_safe_semi(left_state, moved_df, op.left_keys)
            parts.append(op.spark_asof(a_old, b_new))
            parts.append(negate(op.spark_asof(a_old, b_old if b_old is not None else ctx.empty(rschema))))
        return Batch(ctx, self.schema, df=union_all(parts)).materialize() if parts else None

    def state_rows(self) -> int:
        return self.left.rows + self.right.rows
