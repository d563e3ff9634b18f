"""A change flowing through a Spark plan: a lazy DataFrame, or rows already on the
driver as a consolidated Arrow table, or both. Small deltas live on the driver: turning
them back into a DataFrame is a LocalTableScan (no job), and observing them is free."""
from __future__ import annotations

import pyarrow as pa

from ..types import Schema
from .zsets import WEIGHT, consolidate_arrow


class Batch:
    def __init__(self, ctx, schema: Schema, df=None, table: pa.Table | None = None):
        self.ctx, self.schema = ctx, schema
        self._df, self._table = df, table

    @classmethod
    def of_table(cls, ctx, schema, table: pa.Table) -> "Batch | None":
        return None if table is None or table.num_rows == 0 else cls(ctx, schema, table=table)

    def snapshot_state(self):
        return self.schema, self.table()

    @classmethod
    def restore_state(cls, state, ctx, fresh=None):
        schema, table = state
        return cls.of_table(ctx, schema, table)

    def __deepcopy__(self, memo):
        return self  # a change is never modified in place

    def df(self):
        if self._df is None:
            self._df = self.ctx.local_df(self._table, self.schema)
        return self._df

    def table(self) -> pa.Table:
        """The consolidated rows on the driver (one Spark job the first time, if lazy)."""
        if self._table is None:
            self.ctx.jobs += 1
            raw = self._df.toArrow()
            self._table = consolidate_arrow(raw.select(self.schema.names + [WEIGHT]).cast(self.ctx.arrow_schema(self.schema)))
        return self._table

    def materialize(self) -> "Batch | None":
        """This change with its rows on the driver; None when it is empty."""
        return Batch.of_table(self.ctx, self.schema, self.table())

    @property
    def rows(self) -> int | None:
        return None if self._table is None else self._table.num_rows
