"""Z-sets as Spark DataFrames (data columns + `__w`) and as Arrow tables on the driver."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

WEIGHT = "__w"


def negate(df):
    from pyspark.sql import functions as F

    return df.withColumn(WEIGHT, -F.col(WEIGHT))


def consolidate(df):
    """Sum the weights of equal rows (NULLs group together) and drop zero weights."""
    from pyspark.sql import functions as F

    data = [c for c in df.columns if c != WEIGHT]
    return df.groupBy(*data).agg(F.sum(WEIGHT).alias(WEIGHT)).where(F.col(WEIGHT) != 0)


def union_all(dfs: list):
    dfs = [d for d in dfs if d is not None]
    if not dfs:
        return None
    out = dfs[0]
    for d in dfs[1:]:
        out = out.unionByName(d)
    return out


def null_safe_semi(left, right, columns: list[str]):
    """Rows of `left` whose `columns` equal (NULL-safe) some row of the small `right`
    (whose rows callers pass distinct: no shuffle to dedupe them)."""
    from pyspark.sql import functions as F

    keys = F.broadcast(right.select(*columns).alias("k"))
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
