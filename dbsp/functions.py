"""Scalar functions, casts and LIKE for the expression language, each defined twice —
as a Spark Column builder and as a Python function — with the same SQL semantics
(NULL in, NULL out unless stated). tests/dbsp/test_functions.py checks both agree.
"""
from __future__ import annotations

import datetime as dt
import functools
import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal

from . import numeric
from .limits import MAX_STRING_CHARS
from .types import BIGINT_MAX, BIGINT_MIN, NUMERIC

# ---- casts --------------------------------------------------------------------------
CAST_NAMES = {
    "BIGINT": "bigint", "INT": "bigint", "INTEGER": "bigint", "SMALLINT": "bigint", "TINYINT": "bigint",
    "DOUBLE": "double", "FLOAT": "double", "REAL": "double", "DECIMAL": "double",
    "VARCHAR": "string", "TEXT": "string", "CHAR": "string", "NVARCHAR": "string",
    "BOOLEAN": "boolean", "DATE": "date", "TIMESTAMP": "timestamp", "DATETIME": "timestamp",
}

ALLOWED_CASTS = {
    ("bigint", "double"), ("double", "bigint"), ("bigint", "string"), ("boolean", "string"),
    ("date", "string"), ("timestamp", "string"), ("string", "bigint"), ("string", "double"),
    ("string", "date"), ("bigint", "boolean"), ("boolean", "bigint"), ("date", "timestamp"),
    ("timestamp", "date"), ("string", "string"),
}

_INT = re.compile(r"^\s*([+-]?)(\d+)\s*$")
_FLOAT = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
# A string that casts to a date, on every backend: a 4-digit year from 0001 (Python's
# dates and the reference's stop at 9999; Spark would read '12024-01-31', '+2024-01-01' or
# '0000-01-01' as dates Python cannot hold), then -month and -day of 1 or 2 digits, and
# after a full date ' ' or 'T' and anything (as Spark: '2024 junk' is NULL). ASCII
# whitespace around it. Spark's cast runs only on strings of this form (`spark_cast`).
_DATE_FORM = r"[ \t\n\r\f\x0b]*(?!0000)(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?[ \t\n\r\f\x0b]*"
_DATE = re.compile(rf"(?s)\A{_DATE_FORM}\Z")  # (?s): what follows a date may hold newlines
_DATE_JAVA = rf"(?s)\A{_DATE_FORM}\z"  # Java's regex (Spark's rlike) spells the very end \z


def _finite(x):
    return None if x is None or math.isnan(x) or math.isinf(x) else x


def python_cast(value, source: str, target: str):
    if value is None or source == target:
        return value
    pair = (source, target)
    if pair == ("bigint", "double"):
        return float(value)
    if pair == ("double", "bigint"):
        if _finite(value) is None:
            return None
        n = int(value)  # truncates toward zero, as Spark
        return n if BIGINT_MIN <= n <= BIGINT_MAX else None
    if pair == ("bigint", "string"):
        return str(value)
    if pair == ("boolean", "string"):
        return "true" if value else "false"
    if pair == ("date", "string"):
        return value.isoformat()
    if pair == ("timestamp", "string"):
        # not strftime: glibc's %Y does not pad years below 1000 ('999-07-08'), Spark's does
        text = f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if pair == ("string", "bigint"):
        m = _INT.match(value)
        digits = m.group(2).lstrip("0") if m else ""
        if not m or len(digits) > 19:  # out of range, known before int() reads 5000 digits
            return None
        n = int(m.group(1) + (digits or "0"))
        return n if BIGINT_MIN <= n <= BIGINT_MAX else None
    if pair == ("string", "double"):
        return _finite(float(value)) if _FLOAT.match(value) else None
    if pair == ("string", "date"):
        m = _DATE.match(value)
        if not m:
            return None
        try:
            return dt.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
        except ValueError:
            return None
    if pair == ("bigint", "boolean"):
        return value != 0
    if pair == ("boolean", "bigint"):
        return 1 if value else 0
    if pair == ("date", "timestamp"):
        return dt.datetime(value.year, value.month, value.day)
    if pair == ("timestamp", "date"):
        return value.date()
    raise ValueError(f"no cast from {source} to {target}")


def spark_lit(value):
    """A Python value as a Spark literal. Dates and timestamps go as ISO text cast on the
    JVM: PySpark's py4j converters write them with strftime('%Y'), which does not pad
    years below 1000 ('999-07-08': java.sql.Date refuses it), and read naive timestamps
    in the process's local time zone."""
    F = _F()
    if isinstance(value, dt.datetime):
        return F.lit(value.isoformat(sep=" ")).cast("timestamp_ntz")
    if isinstance(value, dt.date):
        return F.lit(value.isoformat()).cast("date")
    return F.lit(value)


def spark_cast(col, source: str, target: str):
    from pyspark.sql import functions as F

    if source == target:
        return col
    spark_name = {"bigint": "bigint", "double": "double", "string": "string", "boolean": "boolean", "date": "date", "timestamp": "timestamp_ntz"}[target]
    if (source, target) == ("string", "bigint"):
        return F.when(col.rlike(r"^\s*[+-]?\d+\s*$"), col.try_cast("bigint"))
    if (source, target) == ("string", "double"):  # '1e400' does not convert (NULL), as in Python
        value = col.try_cast("double")
        finite = ~F.isnan(value) & (F.abs(value) != F.lit(float("inf")))
        return F.when(col.rlike(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$") & finite, value)
    if (source, target) == ("double", "bigint"):
        return F.when(~F.isnan(col), col.try_cast("bigint"))
    if (source, target) == ("string", "date"):
        return F.when(col.rlike(_DATE_JAVA), col.try_cast("date"))
    return col.try_cast(spark_name)


# ---- LIKE ---------------------------------------------------------------------------
# A LIKE pattern is matched in time linear in the value (times the pattern's length) on
# every backend, never by a backtracking `.*` regex (`'%a%a…%b'` over 'aaa…' took
# exponential time): its '%'-separated segments are fixed-length ('_' is any one
# character), so placing each segment at its leftmost occurrence after the previous one
# is optimal, and the last segment must end the value. As a regex with atomic groups
# (Python 3.11+ `re` and Java's, i.e. Spark's `rlike`), which never backtrack into a
# placed segment:  \A(?>seg0)(?>.*?seg1)…(?>.*?segN\z)  with (?s): '%' and '_' match
# newlines too. Arrow's match_like runs RE2 (linear automata) on the pattern itself.
ANY = object()  # '_' in a segment


def like_segments(pattern: str) -> list[list]:
    """The pattern's '%'-separated segments, each a list of characters and ANY ('_').
    A backslash makes the next %, _ or backslash literal; any other use of it is refused
    (raises ValueError with the offset), as Spark refuses it."""
    segments, current, i = [], [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in "%_\\":
                raise LikePatternError("a backslash in a LIKE pattern must precede %, _ or another backslash", i)
            current.append(pattern[i + 1])
            i += 2
            continue
        if ch == "%":
            segments.append(current)
            current = []
        else:
            current.append(ANY if ch == "_" else ch)
        i += 1
    segments.append(current)
    return segments


class LikePatternError(ValueError):
    def __init__(self, message: str, offset: int):
        self.offset = offset
        super().__init__(message)


def _regex_char(ch) -> str:
    if ch is ANY:
        return "."
    return "\\" + ch if ch.isascii() and not ch.isalnum() else ch  # the same in Python's and Java's syntax


def like_regex_text(pattern: str, end_anchor: str) -> str:
    """The atomic-group regex of a LIKE pattern (`end_anchor`: Python's \\Z, Java's \\z)."""
    segments = like_segments(pattern)
    groups = ["".join(map(_regex_char, seg)) for seg in segments]
    groups[-1] += end_anchor
    return "(?s)\\A(?>" + groups[0] + ")" + "".join(f"(?>.*?{g})" for g in groups[1:])


@functools.lru_cache(maxsize=256)
def like_regex(pattern: str) -> re.Pattern:
    return re.compile(like_regex_text(pattern, "\\Z"))


def python_like(value, pattern, insensitive: bool):
    if value is None or pattern is None:
        return None
    if insensitive:
        value, pattern = value.lower(), pattern.lower()
    return like_regex(pattern).match(value) is not None


def spark_like(col, pattern: str | None, insensitive: bool):
    """LIKE of a literal pattern as a Java regex with atomic groups (Spark's own LIKE
    backtracks); ILIKE lowers both sides, as Spark's ilike does."""
    from pyspark.sql import functions as F

    if pattern is None:
        return F.lit(None).cast("boolean")
    if insensitive:
        col, pattern = F.lower(col), pattern.lower()
    return col.rlike(like_regex_text(pattern, "\\z"))


# ---- scalar functions -------------------------------------------------------------
_ROUNDING = Context(prec=400, rounding=ROUND_HALF_UP)  # any double (up to ~1e308) to MAX_ROUND_DIGITS places


def _round_half_up(x, digits):
    if isinstance(x, int):
        return x
    if _finite(x) is None:
        return x
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-digits), context=_ROUNDING))


def _substring(s, start, length=None):
    """Spark's substringSQL: 1-based; 0 acts as 1; negative counts from the end."""
    n = len(s)
    begin = start - 1 if start > 0 else (n + start if start < 0 else 0)
    end = n if length is None else begin + length
    begin = max(begin, 0)
    return "" if begin >= end else s[begin:end]


def _substring_spark(c, start, length=None):
    """_substring on Spark, for any bigint start and length: the bounds are computed in
    decimal (exact; Spark's substr takes ints and fails on larger bigints), clamped to
    the string, then taken."""
    F = _F()
    exact = "decimal(21,0)"
    n, zero = F.char_length(c).cast(exact), F.lit(0).cast(exact)
    start = start.cast(exact)
    begin = F.when(start > 0, start - 1).when(start < 0, n + start).otherwise(zero)
    end = n if length is None else begin + length.cast(exact)
    first = F.least(F.greatest(begin, zero), n)
    last = F.least(F.greatest(end, first), n)
    known = start.isNotNull() if length is None else start.isNotNull() & length.isNotNull()
    return F.when(known, c.substr((first + 1).cast("int"), (last - first).cast("int")))  # a NULL bound: NULL, not the whole string


def _floor(x):
    return x if isinstance(x, int) else (None if _finite(x) is None else math.floor(x))


def _ceil(x):
    return x if isinstance(x, int) else (None if _finite(x) is None else math.ceil(x))


class Function:
    """name, how arguments are checked, the result type, and both implementations."""

    def __init__(self, name, arity, arg_types, result, python, spark, null_propagates=True):
        self.name, self.arity, self.arg_types, self.result = name, arity, arg_types, result
        self.python, self.spark, self.null_propagates = python, spark, null_propagates


def _F():
    from pyspark.sql import functions as F

    return F


STRING, NUM, TEMPORAL = ("string",), NUMERIC, ("date", "timestamp")

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in [
        Function("lower", (1, 1), [STRING], lambda ts: "string", lambda s: s.lower(), lambda c: _F().lower(c)),
        Function("upper", (1, 1), [STRING], lambda ts: "string", lambda s: s.upper(), lambda c: _F().upper(c)),
        Function("length", (1, 1), [STRING], lambda ts: "bigint", len, lambda c: _F().char_length(c).cast("bigint")),
        Function("trim", (1, 1), [STRING], lambda ts: "string", lambda s: s.strip(" "), lambda c: _F().trim(c)),
        Function("abs", (1, 1), [NUM], lambda ts: ts[0], abs, lambda c: _F().abs(c)),
        Function("floor", (1, 1), [NUM], lambda ts: "bigint", _floor, lambda c: _F().floor(c).cast("bigint")),
        Function("ceil", (1, 1), [NUM], lambda ts: "bigint", _ceil, lambda c: _F().ceil(c).cast("bigint")),
        Function("round", (1, 2), [NUM, ("bigint",)], lambda ts: ts[0],
                 lambda x, d=0: _round_half_up(x, d), lambda c, d=None: _F().round(c, d if d is not None else 0)),
        Function("substring", (2, 3), [STRING, ("bigint",), ("bigint",)], lambda ts: "string",
                 _substring, lambda c, s, n=None: _substring_spark(c, s, n)),
        Function("replace", (3, 3), [STRING, STRING, STRING], lambda ts: "string",
                 lambda s, a, b: s if a == "" else s.replace(a, b), lambda c, a, b: _F().replace(c, a, b)),
        Function("concat", (1, 64), [STRING], lambda ts: "string", lambda *xs: "".join(xs), lambda *cs: _F().concat(*cs)),
        Function("year", (1, 1), [TEMPORAL], lambda ts: "bigint", lambda d: d.year, lambda c: _F().year(c).cast("bigint")),
        Function("month", (1, 1), [TEMPORAL], lambda ts: "bigint", lambda d: d.month, lambda c: _F().month(c).cast("bigint")),
        Function("day", (1, 1), [TEMPORAL], lambda ts: "bigint", lambda d: d.day, lambda c: _F().dayofmonth(c).cast("bigint")),
        # a date's time of day is midnight (Spark casts the date to a timestamp)
        Function("hour", (1, 1), [TEMPORAL], lambda ts: "bigint", lambda d: getattr(d, "hour", 0),
                 lambda c: _F().hour(c).cast("bigint")),
        Function("minute", (1, 1), [TEMPORAL], lambda ts: "bigint", lambda d: getattr(d, "minute", 0),
                 lambda c: _F().minute(c).cast("bigint")),
        Function("second", (1, 1), [TEMPORAL], lambda ts: "bigint", lambda d: getattr(d, "second", 0),
                 lambda c: _F().second(c).cast("bigint")),
        Function("coalesce", (1, 64), None, None, lambda *xs: next((x for x in xs if x is not None), None),
                 lambda *cs: _F().coalesce(*cs), null_propagates=False),
        Function("greatest", (2, 64), None, None, lambda *xs: max((x for x in xs if x is not None), default=None),
                 lambda *cs: _F().greatest(*cs), null_propagates=False),
        Function("least", (2, 64), None, None, lambda *xs: min((x for x in xs if x is not None), default=None),
                 lambda *cs: _F().least(*cs), null_propagates=False),
        Function("nullif", (2, 2), None, None, lambda a, b: None if a is not None and b is not None and a == b else a,
                 lambda a, b: _F().nullif(a, b), null_propagates=False),
    ]
}

# sqlglot's node class name -> our function name (names sqlglot parses into its own nodes)
SQLGLOT_NAMES = {
    "Lower": "lower", "Upper": "upper", "Length": "length", "Trim": "trim", "Abs": "abs", "Floor": "floor",
    "Ceil": "ceil", "Round": "round", "Substring": "substring", "Replace": "replace", "Concat": "concat",
    "DPipe": "concat", "Year": "year", "Month": "month", "Day": "day",
    "Hour": "hour", "Minute": "minute", "Second": "second", "Coalesce": "coalesce",
    "Greatest": "greatest", "Least": "least", "Nullif": "nullif",
}


# ---- FORMAT_TIMESTAMP(format, t): strftime's fields, a whitelist, one text for both backends ----
#: strftime field -> (Python: the value's text, Java DateTimeFormatter letters for Spark's date_format)
TIMESTAMP_FIELDS = {
    "Y": (lambda t: f"{t.year:04d}", "yyyy"), "m": (lambda t: f"{t.month:02d}", "MM"),
    "d": (lambda t: f"{t.day:02d}", "dd"), "H": (lambda t: f"{getattr(t, 'hour', 0):02d}", "HH"),
    "M": (lambda t: f"{getattr(t, 'minute', 0):02d}", "mm"), "S": (lambda t: f"{getattr(t, 'second', 0):02d}", "ss"),
}


class TimestampFormatError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset  # in the format text


def timestamp_format(text: str) -> tuple:
    """A strftime format -> its parts: literal strings and field letters (`("field", "Y")`).
    Only the fields of TIMESTAMP_FIELDS and `%%`; anything else is refused with its offset."""
    parts, literal, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch != "%":
            literal.append(ch)
            i += 1
            continue
        field = text[i + 1] if i + 1 < len(text) else ""
        if field == "%":
            literal.append("%")
        elif field in TIMESTAMP_FIELDS:
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(("field", field))
        else:
            shown = f"%{field}" if field else "a lone %"
            raise TimestampFormatError(f"FORMAT_TIMESTAMP: {shown} is not supported (fields: "
                                       f"{', '.join('%' + f for f in TIMESTAMP_FIELDS)} and %% for a %)", i)
        i += 2
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def python_format_timestamp(parts: tuple, value) -> str:
    return "".join(TIMESTAMP_FIELDS[p[1]][0](value) if isinstance(p, tuple) else p for p in parts)


def spark_timestamp_pattern(parts: tuple) -> str:
    """Java's pattern: fields as letters, literal text quoted ('' is a quote)."""
    out = []
    for p in parts:
        out.append(TIMESTAMP_FIELDS[p[1]][1] if isinstance(p, tuple) else "'" + p.replace("'", "''") + "'")
    return "".join(out)


# ---- SPLIT(s, separator) -> array<string>: the separator is a literal, matched as text ----
def java_regex_literal(text: str) -> str:
    """`text` as a Java regex matching exactly it (Spark's split takes a regex): every
    character that is not a letter or digit escaped (always legal in Java's syntax)."""
    return "".join(ch if ch.isalnum() else "\\" + ch for ch in text)


def spark_json_strings(array_col):
    """An array<string> column (no NULL elements) as the JSON text types.encode_list gives
    (Python's json.dumps, ensure_ascii=False): the same escapes, so a list made in Spark
    equals the same list encoded on the driver."""
    F = _F()
    short = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

    def escape(x):
        for ch, rep in short.items():
            x = F.replace(x, F.lit(ch), F.lit(rep))
        for code in range(0x20):
            ch = chr(code)
            if ch not in short:
                x = F.replace(x, F.lit(ch), F.lit(f"\\u{code:04x}"))
        return x

    items = F.transform(array_col, lambda x: F.concat(F.lit('"'), escape(x), F.lit('"')))
    return F.when(array_col.isNotNull(), F.concat(F.lit("["), F.array_join(items, ","), F.lit("]")))


# ---- functions that can overflow or grow a string: checked, naming who evaluates them ----
class Checked:
    """python(values, types, where) with no NULL among values; spark(cols, types, where)."""

    def __init__(self, python, spark):
        self.python, self.spark = python, spark


def _too_long(where, name: str, length) -> numeric.ValueOutOfRange:
    return numeric.ValueOutOfRange(where, f"{name}() would make a string of {length:,} characters (limit MAX_STRING_CHARS = {MAX_STRING_CHARS:,})")


def _spark_bounded(result, length, where, name: str):
    """`result`, failing the job when `length` (a Column: the result's length, computed
    before the string is) is beyond MAX_STRING_CHARS."""
    F = _F()
    message = str(numeric.ValueOutOfRange(where, f"{name}() would make a string of more than {MAX_STRING_CHARS:,} characters "
                                                 f"(limit MAX_STRING_CHARS = {MAX_STRING_CHARS:,})"))
    return F.when(length > MAX_STRING_CHARS, F.raise_error(F.lit(message)).cast("string")).otherwise(result)


def _concat_python(values, types, where):
    length = sum(len(v) for v in values)
    if length > MAX_STRING_CHARS:
        raise _too_long(where, "concat", length)
    return "".join(values)


def _concat_spark(cols, types, where):
    F = _F()
    length = F.lit(0)
    for c in cols:
        length = length + F.char_length(c).cast("bigint")
    return _spark_bounded(F.concat(*cols), length, where, "concat")


def _replace_python(values, types, where):
    s, a, b = values
    if a == "":
        return s
    length = len(s) + s.count(a) * (len(b) - len(a))
    if length > MAX_STRING_CHARS:
        raise _too_long(where, "replace", length)
    return s.replace(a, b)


def _replace_spark(cols, types, where):
    F = _F()
    s, a, b = cols
    n = lambda c: F.char_length(c).cast("bigint")  # noqa: E731
    occurrences = F.when(n(a) > 0, F.try_divide(n(s) - n(F.replace(s, a, F.lit(""))), n(a)).cast("bigint")).otherwise(F.lit(0))
    return _spark_bounded(F.replace(s, a, b), n(s) + occurrences * (n(b) - n(a)), where, "replace")


def _abs_python(values, types, where):
    return numeric.check_number(abs(values[0]), types[0], where, "abs")


def _abs_spark(cols, types, where):
    F = _F()
    if types[0] == "bigint":  # abs(-2^63) does not fit
        return numeric.spark_checked_bigint(F.when(cols[0] != F.lit(BIGINT_MIN), F.abs(cols[0])), cols, where, "abs")
    return F.abs(cols[0])


def _rounding_python(name, fn):
    def python(values, types, where):
        x = values[0]
        if isinstance(x, int):
            return x
        if not numeric.fits_bigint(x):
            raise numeric.ValueOutOfRange(where, f"{name}({x}) is outside the bigint range (64 bits)")
        return fn(x)

    return python


def _rounding_spark(name):
    def spark(cols, types, where):
        F = _F()
        x = cols[0] if types[0] == "bigint" else numeric.spark_fits_bigint(cols[0], where, name)
        return getattr(F, name)(x).cast("bigint")

    return spark


CHECKED = {
    "concat": Checked(_concat_python, _concat_spark),
    "replace": Checked(_replace_python, _replace_spark),
    "abs": Checked(_abs_python, _abs_spark),
    "floor": Checked(_rounding_python("floor", math.floor), _rounding_spark("floor")),
    "ceil": Checked(_rounding_python("ceil", math.ceil), _rounding_spark("ceil")),
}
