"""Z-sets as Spark DataFrames (data columns + `__w`) and as Arrow tables on the driver."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..frames import WEIGHT, consolidate, negate  # noqa: F401  (the Spark backend's names for them)


def union_all(dfs: list):
    dfs = [d for d in dfs if d is not None]
    if not dfs:
        return None
    out = dfs[0]
    for d in dfs[1:]:
        out = out.unionByName(d)
    return out


def null_safe_semi(left, right, columns: list[str], broadcast: bool = True):
    """Rows of `left` whose `columns` equal (NULL-safe) some row of the small `right`
    (whose rows callers pass distinct: no shuffle to dedupe them). `broadcast=False`:
    a shuffled hash join instead (a broadcast relation of many keys stays on the
    driver's heap as long as its plan is reachable; a shuffle's hash maps go with
    their tasks)."""
    from pyspark.sql import functions as F

    keys = right.select(*columns).alias("k")
    keys = F.broadcast(keys) if broadcast else keys.hint("shuffle_hash")
    cond = [F.col(f"s.{c}").eqNullSafe(F.col(f"k.{c}")) for c in columns]
    return left.alias("s").join(keys, on=cond, how="left_semi")


def consolidate_arrow(table: pa.Table) -> pa.Table:
    """The same on the driver with Arrow's group_by (NULLs group together)."""
    data = [c for c in table.column_names if c != WEIGHT]
    if table.num_rows == 0:
        return table
    grouped = table.group_by(data, use_threads=False).aggregate([(WEIGHT, "sum")])
    grouped = grouped.rename_columns(data + [WEIGHT])
    return grouped.filter(pc.not_equal(grouped[WEIGHT], 0))


def concat(tables: list[pa.Table | None]) -> pa.Table | None:
    tables = [t for t in tables if t is not None and t.num_rows]
    if not tables:
        return None
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")


def fill_value(t: pa.DataType) -> pa.Scalar:
    """Any value of type t (what a NULL is filled with in join codes)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_boolean(t):
        return pa.scalar(False)
    if pa.types.is_timestamp(t) or pa.types.is_date64(t):
        return pa.scalar(0, pa.int64()).cast(t)
    if pa.types.is_date32(t):
        return pa.scalar(0, pa.int32()).cast(t)
    return pa.scalar(0).cast(t)


def join_codes(columns: list[str]) -> list[str]:
    """The names `with_join_codes` adds for `columns`."""
    return [f"__k{i}" for i in range(len(columns))] + [f"__null{i}" for i in range(len(columns))]


def with_join_codes(table: pa.Table, columns: list[str]) -> pa.Table:
    """`table` plus NULL-safe join columns: each of `columns` with NULL filled, and its
    is-NULL flag. Arrow's hash join, like SQL's, never matches NULL keys; joining on
    these codes matches NULL with NULL (row identity, as consolidation needs)."""
    for i, c in enumerate(columns):
        table = table.append_column(f"__k{i}", pc.fill_null(table[c], fill_value(table[c].type)))
    for i, c in enumerate(columns):
        table = table.append_column(f"__null{i}", pc.is_null(table[c]))
    return table


def null_safe_semi_arrow(table: pa.Table, keys: pa.Table, columns: list[str], anti: bool = False) -> pa.Table:
    """Rows of `table` whose `columns` equal (NULL-safe) a row of `keys` (or, with
    `anti`, equal none), with `table`'s columns."""
    if len(columns) == 1 and not anti:
        return table.filter(pc.is_in(table[columns[0]], value_set=keys[columns[0]], skip_nulls=False))
    if not anti and keys.num_rows * 8 < table.num_rows:
        # few keys against a large table: keep the rows whose first column is one of the
        # keys' (a vectorised scan, NULL matching NULL) and join only those, instead of
        # building join codes for every row
        table = table.filter(pc.is_in(table[columns[0]], value_set=keys[columns[0]], skip_nulls=False))
        if table.num_rows == 0:
            return table
    codes = join_codes(columns)
    found = with_join_codes(table, columns).join(with_join_codes(keys.select(columns), columns).select(codes), keys=codes,
                                                 join_type="left anti" if anti else "left semi", use_threads=False)
    return found.select(table.column_names)
