"""The executor of an input table with a primary key (upsert; see dbsp/upsert.py).

State: the current table, one row per key, as a trace keyed by the primary key (on the
driver while small, in cached Spark levels beyond `recent_max`). A change's keys are
looked up (no Spark job while the table is on the driver), the table's change
−old + new is computed on the driver with the shared definition, and added to the trace.
"""
from __future__ import annotations

from ..upsert import apply_change
from .batch import Batch
from .trace import Trace


class KeyedTable:
    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.key = list(op.primary_key)
        self.trace = Trace(ctx, schema, key=self.key)
        self._index = [schema.names.index(k) for k in self.key]

    def step(self, inputs):
        d = inputs["in"]
        if d is None:
            return None
        self.ctx.took("row")
        change = self.ctx.to_zset(d)
        keys = {tuple(row[i] for i in self._index) for row, _ in change}
        found = self.trace.lookup(self.key, list(keys))
        current = {}
        if found is not None:
            for row, w in self.ctx.to_zset_table(found, self.schema):
                if w > 0:
                    current[tuple(row[i] for i in self._index)] = row
        out = apply_change(current, change, self._index, self.op.node_id)
        table = self.ctx.to_table(out, self.schema)
        self.trace.add(table)
        return Batch.of_table(self.ctx, self.schema, table)

    def state_rows(self) -> int:
        return self.trace.rows
