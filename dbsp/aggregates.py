"""Aggregate functions over a group of weighted rows, defined once for both backends.

Over a group's rows x with weights w (the consolidated Z-set restricted to the group):
    count()      = Σ w                       (COUNT(*))
    count(e)     = Σ w, over rows where e is not NULL
    sum(e)       = Σ w·e over rows where e is not NULL; NULL when count(e) = 0
    avg(e)       = sum(e) / count(e) as a double; NULL when count(e) = 0
    min(e), max(e)     over rows with w > 0 and e not NULL; NULL when there are none
    count_distinct(e)  the number of distinct non-NULL e among rows with w > 0
    sum_distinct(e), avg_distinct(e)   the sum / average (double) of those distinct
                       values; NULL when there are none (SQL's SUM / AVG(DISTINCT e))
A group exists while its total weight Σ w is not 0. A global aggregate (no group_by)
always has one row; its sum over no values is 0 (as the DBSP oracle's `total`).
count, sum and avg are linear in the input (DBSP computes them from deltas); the
distinct ones are linear in the (group, value) pairs present (the Spark backend keeps,
per pair, the rows holding it, and adds the pairs crossing 0 ↔ positive: see
dbsp/spark/distinct_aggregate.py); min and max need the integrated input of the touched
groups.
"""
from __future__ import annotations

from . import numeric

FUNCTIONS = ("count", "sum", "avg", "min", "max", "count_distinct", "sum_distinct", "avg_distinct")
NEEDS_EXPR = {"sum", "avg", "min", "max", "count_distinct", "sum_distinct", "avg_distinct"}
#: the functions over numbers
NUMERIC = {"sum", "avg", "sum_distinct", "avg_distinct"}
#: computable from any Z-set holding the group's rows, consolidated or not (Σ over rows)
LINEAR = {"count", "sum", "avg"}
#: over the distinct non-NULL values present: linear in the (group, value) pairs that
#: appear and disappear (dbsp/spark/distinct_aggregate.py)
DISTINCT = {"count_distinct", "sum_distinct", "avg_distinct"}


def result_type(fn: str, arg_type: str | None) -> str:
    if fn in ("count", "count_distinct"):
        return "bigint"
    if fn in ("avg", "avg_distinct"):
        return "double"
    return arg_type or "bigint"


def python_aggregate(fn: str, values: list[tuple[object, int]], global_: bool):
    """values: (e(x), w) for every row of the group."""
    if fn == "count":
        return sum(w for v, w in values if v is not None)
    present = [(v, w) for v, w in values if v is not None]
    if fn == "sum":
        if sum(w for _, w in present) == 0:  # linear in the input, as count(e)
            return 0 if global_ else None
        return sum(v * w for v, w in present)
    if fn == "avg":
        n = sum(w for _, w in present)
        total = sum(v * w for v, w in present)
        if isinstance(total, int):  # bigints are summed in 64 bits on every path (numeric rule)
            numeric.check_number(total, "bigint", None, "avg()")
        return None if n == 0 else float(total) / n
    positive = [v for v, w in present if w > 0]
    if fn == "min":
        return min(positive) if positive else None
    if fn == "max":
        return max(positive) if positive else None
    if fn == "count_distinct":
        return len(set(positive))
    if fn in ("sum_distinct", "avg_distinct"):
        distinct = set(positive)
        if not distinct:
            return None
        total = sum(distinct)
        if isinstance(total, int):  # bigints are summed in 64 bits on every path (numeric rule)
            numeric.check_number(total, "bigint", None, f"{fn}()")
        return total if fn == "sum_distinct" else float(total) / len(distinct)
    raise ValueError(fn)


def spark_aggregate(fn: str, e, weight, global_: bool, result_type_name: str, where: str | None = None, arg_type: str | None = None):
    """The same as a Spark aggregate Column; `e` is None for count(). A sum past 64 bits
    or a double sum that is not finite fails the job naming `where` (dbsp.numeric)."""
    from pyspark.sql import functions as F

    if fn == "count":
        counted = weight if e is None else F.when(e.isNotNull(), weight).otherwise(F.lit(0))
        return F.coalesce(F.sum(counted), F.lit(0)).cast("long")
    if fn in ("sum", "avg"):
        n = F.sum(F.when(e.isNotNull(), weight).otherwise(F.lit(0)))
        s = _spark_sum(e, weight, arg_type, where, fn)
    if fn == "sum":
        total = F.when(n != 0, s).cast(result_type_name)
        return F.coalesce(total, F.lit(0).cast(result_type_name)) if global_ else total
    if fn == "avg":
        return numeric.spark_checked(F.when(n != 0, s.cast("double") / n.cast("double")), "double", where, "avg")
    if fn == "min":
        return F.min(F.when(weight > 0, e))
    if fn == "max":
        return F.max(F.when(weight > 0, e))
    if fn == "count_distinct":
        return F.count_distinct(F.when(weight > 0, e)).cast("long")
    if fn in ("sum_distinct", "avg_distinct"):
        present = F.when(weight > 0, e)
        total = numeric.spark_checked(F.sum_distinct(present), arg_type or "bigint", where, f"{fn}()")
        if fn == "sum_distinct":
            return total.cast(result_type_name)
        return numeric.spark_checked(total.cast("double") / F.count_distinct(present).cast("double"), "double", where, fn)
    raise ValueError(fn)


def _spark_sum(e, weight, arg_type: str | None, where: str | None, fn: str):
    """Σ w·e over non-NULL e: exact for bigint (try_*: NULL on overflow, then a named
    error rather than Spark's bare ARITHMETIC_OVERFLOW), finite for double."""
    from pyspark.sql import functions as F

    if arg_type == "bigint":
        product = F.try_multiply(e, weight)
        total = F.try_sum(F.when(e.isNotNull(), product))
        overflowed = (F.max(F.when(e.isNotNull() & product.isNull(), F.lit(1))) == 1) | (
            total.isNull() & (F.count(e) > 0))
        message = str(numeric.ValueOutOfRange(where, f"{fn}() gave a value outside the bigint range (64 bits)"))
        return F.when(F.coalesce(overflowed, F.lit(False)), F.raise_error(F.lit(message)).cast("long")).otherwise(total)
    return numeric.spark_checked(F.sum(F.when(e.isNotNull(), e * weight)), "double", where, f"{fn}()")
