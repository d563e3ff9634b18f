"""Z-sets as tables: the weight column (`__w`) next to the data columns, and the two
DataFrame operations the operators' Spark forms use (negate, consolidate). Below both
dbsp.operators and dbsp.spark, so that the Spark backend depends on the operators and
not the other way round."""
from __future__ import annotations

WEIGHT = "__w"


def negate(df):
    from pyspark.sql import functions as F

    return df.withColumn(WEIGHT, -F.col(WEIGHT))


def consolidate(df):
    """Sum the weights of equal rows (NULLs group together) and drop zero weights."""
    from pyspark.sql import functions as F

    data = [c for c in df.columns if c != WEIGHT]
    return df.groupBy(*data).agg(F.sum(WEIGHT).alias(WEIGHT)).where(F.col(WEIGHT) != 0)
