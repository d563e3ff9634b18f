"""The numeric rule, the same on every path (row-by-row Python, Arrow, Spark):

- a number literal must be a finite double or fit a bigint (64-bit); anything else is
  refused at validation with its position (dbsp.expr);
- a computed double that is not finite (±infinity, NaN: `d * 1e300`, `x / 1e-300`, two
  rows of 1.7e308 summed) and a computed bigint outside 64 bits (`a * b`, `-a`,
  `abs(a)`, `floor(x)`, a sum) fail the tick with ValueOutOfRange, whose message names
  the node and its operator: "node 'id' (map): ...". Nothing of that tick is committed.
- conversions that do not fit give NULL, as every other failed CAST does
  (`CAST('1e400' AS DOUBLE)`, `CAST('9…9' AS BIGINT)`, `CAST(1e300 AS BIGINT)`).

Checks are column-at-a-time where the values are columns (Arrow, Spark) and one
comparison per value in the row form.
"""
from __future__ import annotations

import math

from .types import BIGINT_MAX, BIGINT_MIN

#: operators that compute values (the others pass, filter, join or count rows): their
#: results on the driver are checked by the runtime after each step
COMPUTING_KINDS = frozenset({"map", "flat_map", "aggregate", "tumbling_window", "sliding_window", "session_window", "fixedpoint"})
_TWO_63 = 9.223372036854775808e18  # 2^63 as a double: doubles >= it do not fit a bigint


class ValueOutOfRange(ArithmeticError):
    """A value a tick computed is outside what a column can hold (see the module doc)."""

    def __init__(self, where: str | None, what: str):
        self.where, self.what = where, what
        super().__init__(f"{where}: {what}" if where else what)


def node_label(node_id: str, kind: str) -> str:
    """How a runtime error names where it happened: "node 'id' (kind)"."""
    return f"node '{node_id}' ({kind})"


def _describe(op: str) -> str:
    return {"neg": "unary minus"}.get(op, op if " " in op or op.endswith(")") else f"'{op}'")


# ---- row form -------------------------------------------------------------------------
def check_number(value, typ: str, where: str | None, op: str):
    """`value` (a Python number of SQL type `typ`), or ValueOutOfRange."""
    if value is None:
        return None
    if typ == "double":
        if not math.isfinite(value):
            raise ValueOutOfRange(where, f"{_describe(op)} gave {value} (a double must be finite)")
    elif typ == "bigint" and not BIGINT_MIN <= value <= BIGINT_MAX:
        raise ValueOutOfRange(where, f"{_describe(op)} gave {value}, outside the bigint range (64 bits)")
    return value


def check_rows(rows, types: list[str], where: str | None, what: str = "a result") -> None:
    """Every numeric value of `rows` (tuples of the given column types) in range."""
    numeric = [(i, t) for i, t in enumerate(types) if t in ("double", "bigint")]
    if not numeric:
        return
    for row in rows:
        for i, t in numeric:
            check_number(row[i], t, where, what)


# ---- Arrow ----------------------------------------------------------------------------
def check_arrow(values, typ: str, where: str | None, op: str):
    """`values` (an Arrow array or scalar), or ValueOutOfRange when a double is not finite.
    (Arrow's checked integer kernels raise on bigint overflow; see wrap_arrow_overflow.)"""
    import pyarrow as pa
    import pyarrow.compute as pc

    if typ != "double" or values.type == pa.null():
        return values
    finite = pc.is_finite(values)
    if isinstance(finite, pa.Scalar):
        bad = finite.is_valid and not finite.as_py()
    else:
        bad = pc.any(pc.invert(pc.fill_null(finite, True))).as_py()
    if bad:
        raise ValueOutOfRange(where, f"{_describe(op)} gave a value that is not finite (a double must be finite)")
    return values


def check_table(table, types: dict[str, str], where: str | None) -> None:
    """Every double column of an Arrow table finite (bigint columns are int64 already)."""
    for name, typ in types.items():
        if typ == "double" and name in table.column_names:
            check_arrow(table[name], typ, where, "a result")


def bigint_sum(sums):
    """Exact sums (decimal128 Arrow values) as int64, or ValueOutOfRange past 64 bits."""
    import pyarrow as pa
    import pyarrow.compute as pc

    low, high = pc.min_max(sums).values()
    if (low.is_valid and low.as_py() < BIGINT_MIN) or (high.is_valid and high.as_py() > BIGINT_MAX):
        raise ValueOutOfRange(None, "a sum gave a value outside the bigint range (64 bits)")
    return pc.cast(sums, pa.int64())


def is_overflow(error: BaseException) -> bool:
    """An overflow some library raised while a node computed: Python's int to int64,
    Arrow's checked kernels, Spark's ANSI arithmetic."""
    text = str(error)
    return isinstance(error, OverflowError) or (
        type(error).__name__ == "ArrowInvalid" and ("overflow" in text or "out of bounds" in text)) or "ARITHMETIC_OVERFLOW" in text


# ---- Spark ----------------------------------------------------------------------------
def spark_checked(col, typ: str, where: str | None, op: str):
    """`col`, failing the Spark job with the node's message where a double is not finite."""
    from pyspark.sql import functions as F

    if typ != "double":
        return col
    message = str(ValueOutOfRange(where, f"{_describe(op)} gave a value that is not finite (a double must be finite)"))
    bad = F.isnan(col) | (F.abs(col) == F.lit(float("inf")))
    return F.when(bad, F.raise_error(F.lit(message)).cast("double")).otherwise(col)


def spark_checked_bigint(result, operands: list, where: str | None, op: str):
    """A try_* bigint result (NULL on overflow): fail where it is NULL but no operand is."""
    from pyspark.sql import functions as F

    message = str(ValueOutOfRange(where, f"{_describe(op)} gave a value outside the bigint range (64 bits)"))
    overflowed = result.isNull()
    for operand in operands:
        overflowed = overflowed & operand.isNotNull()
    return F.when(overflowed, F.raise_error(F.lit(message)).cast("bigint")).otherwise(result)


def spark_fits_bigint(x, where: str | None, op: str):
    """A double column whose floor/ceil must fit a bigint: fail where it does not."""
    from pyspark.sql import functions as F

    message = str(ValueOutOfRange(where, f"{_describe(op)} gave a value outside the bigint range (64 bits)"))
    return F.when((x >= F.lit(_TWO_63)) | (x < F.lit(-_TWO_63)), F.raise_error(F.lit(message)).cast("double")).otherwise(x)


def fits_bigint(x: float) -> bool:
    return -_TWO_63 <= x < _TWO_63

