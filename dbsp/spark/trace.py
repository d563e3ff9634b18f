"""A trace: the integral I(Δ) of a change stream, kept as a spine (as differential
dataflow's and Feldera's traces) so that adding a small delta costs little and never
grows Spark lineage:

- `recent`: an Arrow table on the driver, consolidated on every add (no Spark job);
- `levels`: checkpointed DataFrames, largest first. When `recent` exceeds
  `recent_max` rows it becomes a new level; adjacent levels merge (consolidate +
  localCheckpoint) while the newer is at least 1/`ratio` of the older, so each row is
  rewritten O(log n) times in all, and a tick's cost does not grow with the state.

Reads see the union of all parts (unconsolidated across parts: weights add up, which
is what joins and aggregates need).
"""
from __future__ import annotations

import pyarrow as pa

from ..types import Schema
from .zsets import concat, consolidate, consolidate_arrow, union_all


class Trace:
    def __init__(self, ctx, schema: Schema, recent_max: int = 50_000, ratio: int = 4):
        self.ctx, self.schema = ctx, schema
        self.recent_max, self.ratio = recent_max, ratio
        self.recent: pa.Table | None = None
        self.levels: list[tuple[object, int]] = []  # (checkpointed DataFrame, row bound)

    @property
    def rows(self) -> int:
        """An upper bound of the rows held (exact for `recent`)."""
        return (self.recent.num_rows if self.recent is not None else 0) + sum(n for _, n in self.levels)

    def add(self, table: pa.Table | None) -> None:
        if table is None or table.num_rows == 0:
            return
        merged = concat([self.recent, table])
        self.recent = consolidate_arrow(merged) if self.recent is not None else table
        if self.recent.num_rows > self.recent_max:
            self._spill()

    def _spill(self) -> None:
        df = self.ctx.local_df(self.recent, self.schema).localCheckpoint(eager=True)
        self.ctx.jobs += 1
        self.levels.append((df, self.recent.num_rows))
        self.recent = None
        while len(self.levels) >= 2 and self.levels[-1][1] * self.ratio >= self.levels[-2][1]:
            (older, n1), (newer, n2) = self.levels[-2], self.levels[-1]
            merged = consolidate(older.unionByName(newer)).localCheckpoint(eager=True)
            self.ctx.jobs += 1
            self.levels[-2:] = [(merged, n1 + n2)]

    def df(self):
        """The integral as one DataFrame (None when empty)."""
        parts = [df for df, _ in self.levels]
        if self.recent is not None and self.recent.num_rows:
            parts.append(self.ctx.local_df(self.recent, self.schema))
        return union_all(parts)

    def snapshot_table(self) -> pa.Table | None:
        """All rows on the driver, consolidated (for snapshots and tests)."""
        df = self.df()
        if df is None:
            return None
        return consolidate_arrow(df.toArrow().cast(self.ctx.arrow_schema(self.schema)))
