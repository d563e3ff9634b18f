"""A random generator of the expression language, written twice from one tree: as a
user writes it (the engine's text, with SQL's precedence and as few parentheses as it
allows, in every spelling the language accepts) and as DuckDB evaluates it (fully
parenthesised). It shares no code with the engine (dbsp.expr, dbsp.functions): the
DuckDB text says each documented rule of the engine in DuckDB's own SQL.

The rules said in DuckDB's SQL (where DuckDB's defaults differ from the engine's
documented semantics, docs/circuit-format.md#expressions):
- number literals are typed (`3::BIGINT`, `2.5::DOUBLE`): DuckDB reads `3` as a 32-bit
  INTEGER and `2.5` as a DECIMAL;
- `/` is double division and `x / 0` is NULL: `a::DOUBLE / NULLIF(b::DOUBLE, 0)`; `x % 0`
  is NULL too (DuckDB gives NaN for a double): `a % NULLIF(b, 0)`;
- LIKE / ILIKE escape with a backslash: `ESCAPE '\\'`;
- a CAST that does not convert is NULL: TRY_CAST; double -> bigint truncates toward
  zero (`trunc` first); string -> bigint takes only an optional sign and digits between
  spaces (DuckDB reads '3.5' as 4 and '1e3' as 1000); string -> date takes a 4-digit
  year, then an optional month and day, then optionally 'T' or ' ' and anything (Spark's
  forms: '2024' is 2024-01-01; DuckDB reads '4-02-29' as the year 4 and refuses '2024');
- round() is HALF_UP on the double's shortest decimal form (Spark's): through VARCHAR
  and DECIMAL; floor / ceil give a bigint;
- substring() is Spark's (1-based, 0 acts as 1, a negative start counts from the end,
  a negative length is empty), written with DuckDB's substring over computed bounds;
- concat() and `||` are NULL when any argument is (DuckDB's concat skips NULLs): `||`;
- array_contains(l, x) is NULL when x is not found and l holds a NULL (SQL's IN);
  element_at is list_extract; cardinality is len;
- `a <=> b` is IS NOT DISTINCT FROM.

`Grammar.used` records every production a run took, so a test can check that the
fixed seeds reach each of them (PRODUCTIONS).
"""
from __future__ import annotations

import random

# precedence, loosest first: a child binding looser than its parent is parenthesised
OR, AND, NOT, CMP, ADD, MUL, NEG, ATOM = range(8)

NUMERIC = ("bigint", "double")
SCALARS = ("bigint", "double", "string", "boolean", "date", "timestamp")

COLUMNS = {
    "id": "bigint", "i": "bigint", "j": "bigint", "d": "double", "e": "double", "s": "string", "u": "string",
    "b": "boolean", "c": "boolean", "day": "date", "ts": "timestamp", "li": "array<bigint>", "ls": "array<string>",
}

INTS = [-7, -3, -1, 0, 1, 2, 3, 5, 10]
DOUBLES = [-2.5, -1.0, -0.5, 0.0, 0.25, 1.5, 2.5, 2.675, 3.0, 10.125]
STRINGS = ["", "a", "abc", "ABC", "aBc", "a%b", "x_y", " 12 ", "-7", "3.5", "1e3", "b\\c", "hello world", "Zz",
           "2024-02-29", "true", "héllo", "  pad  "]
DATES = ["2024-01-31", "2024-02-29", "1999-12-31", "0999-07-08"]
TIMESTAMPS = ["2024-01-31T10:20:30", "2024-02-29T00:00:00", "2023-12-31T23:59:59.500000", "0999-07-08T01:02:03"]
INT_LISTS = [[], [1], [1, None], [3, 2, 1], [None]]
STRING_LISTS = [["a", "b"], [None], ["abc"], []]
SEPARATORS = ["a", " ", "-", "b\\", "l", "é", "%"]
TIMESTAMP_PARTS = {"Y": ("year", 4), "m": ("month", 2), "d": ("day", 2), "H": ("hour", 2), "M": ("minute", 2), "S": ("second", 2)}
LIKE_PIECES = ["a", "b", "c", "A", "x", " ", "%", "%", "_", "\\%", "\\_", "\\\\", "1"]

#: every production the grammar has; a run with the fixed seeds must take each
PRODUCTIONS = {
    # boolean
    "column:boolean", "literal:boolean", "NULL", "compare", "AND", "OR", "NOT", "NOT (...)", "IS NULL", "IS NOT NULL",
    "IS DISTINCT FROM", "IS NOT DISTINCT FROM", "<=>", "IN", "NOT IN", "BETWEEN", "NOT BETWEEN", "LIKE", "NOT LIKE",
    "ILIKE", "NOT ILIKE", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE", "array_contains", "compare ISO literal",
    # numbers
    "column:bigint", "column:double", "literal:bigint", "literal:double", "neg", "+", "-", "*", "/", "%",
    "abs", "floor", "ceil", "round", "round digits", "length", "year", "month", "day", "hour", "minute", "second",
    "cardinality", "array_size", "element_at", "cardinality split",
    # strings
    "column:string", "literal:string", "lower", "upper", "trim", "replace", "substring", "substring length",
    "concat", "||", "format_timestamp", "split[]",
    # dates
    "column:date", "column:timestamp",
    # any type
    "CASE WHEN", "CASE x WHEN", "coalesce", "greatest", "least", "nullif", "CAST", "::",
}
CASTS = {  # (from, to) the language allows, besides a type to itself
    ("bigint", "double"), ("double", "bigint"), ("bigint", "string"), ("boolean", "string"), ("date", "string"),
    ("timestamp", "string"), ("string", "bigint"), ("string", "double"), ("string", "date"), ("bigint", "boolean"),
    ("boolean", "bigint"), ("date", "timestamp"), ("timestamp", "date"),
}
CAST_WORDS = {"bigint": ["BIGINT", "INT", "INTEGER"], "double": ["DOUBLE", "FLOAT", "REAL"], "string": ["VARCHAR", "TEXT"],
              "boolean": ["BOOLEAN"], "date": ["DATE"], "timestamp": ["TIMESTAMP"]}
DUCK_CAST = {"bigint": "BIGINT", "double": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP"}


class E:
    """A generated expression: the engine's text and its precedence, DuckDB's text, its type."""

    __slots__ = ("text", "prec", "duck", "type")

    def __init__(self, text: str, prec: int, duck: str, type_: str):
        self.text, self.prec, self.duck, self.type = text, prec, duck, type_

    def at(self, prec: int) -> str:
        """The engine's text as an operand of an operator of precedence `prec`."""
        return self.text if self.prec > prec else f"({self.text})"


def negated(a: E, type_: str) -> E:
    """Unary minus: `-x`, or `-(...)` (never `--`, a comment)."""
    text = f"-{a.text}" if a.prec == ATOM and not a.text.startswith("-") else f"-({a.text})"
    return E(text, NEG, f"(-({a.duck}))", type_)


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class Grammar:
    def __init__(self, rng: random.Random, max_depth: int = 3, used: set[str] | None = None):
        self.rng = rng
        self.max_depth = max_depth
        self.used: set[str] = set() if used is None else used  # shared across rounds: they reach what earlier ones missed

    def take(self, production: str) -> None:
        self.used.add(production)

    def pick(self, kinds: list[str]) -> str:
        """One of `kinds`, preferring (most of the time) one no expression has taken yet, so
        a few rounds reach every production."""
        unused = [k for k in kinds if k not in self.used and k != "arith"]
        if unused and self.rng.random() < 0.6:
            return self.rng.choice(unused)
        return self.rng.choice(kinds)

    # ---- leaves -----------------------------------------------------------------------
    def column(self, type_: str) -> E | None:
        names = [n for n, t in COLUMNS.items() if t == type_]
        if not names:
            return None
        name = self.rng.choice(names)
        self.take(f"column:{type_}")
        return E(name, ATOM, f'"{name}"', type_)

    def literal(self, type_: str) -> E:
        r = self.rng
        if r.random() < 0.08:
            self.take("NULL")
            return E("NULL", ATOM, f"NULL::{DUCK_CAST.get(type_, 'BIGINT')}", "null")
        self.take(f"literal:{type_}" if type_ in ("bigint", "double", "string", "boolean") else f"literal:{type_}")
        if type_ == "bigint":
            v = r.choice(INTS)
            return E(str(v), ATOM if v >= 0 else NEG, f"({v})::BIGINT", type_)
        if type_ == "double":
            v = r.choice(DOUBLES)
            return E(repr(v), ATOM if v >= 0 else NEG, f"({v!r})::DOUBLE", type_)
        if type_ == "string":
            v = r.choice(STRINGS)
            return E(sql_string(v), ATOM, sql_string(v), type_)
        if type_ == "boolean":
            v = r.choice(["TRUE", "FALSE"])
            return E(v, ATOM, v, type_)
        if type_ == "date":  # a date literal is a CAST of an ISO string
            v = r.choice(DATES)
            return E(f"CAST('{v}' AS DATE)", ATOM, f"DATE '{v}'", type_)
        v = r.choice(DATES)  # the language has no string -> timestamp cast: midnight of a date
        return E(f"CAST(CAST('{v}' AS DATE) AS TIMESTAMP)", ATOM, f"TIMESTAMP '{v} 00:00:00'", type_)

    # ---- any type ---------------------------------------------------------------------
    def expr(self, type_: str, depth: int = 0) -> E:
        r = self.rng
        if depth >= self.max_depth or r.random() < 0.18:
            leaf = self.column(type_) if r.random() < 0.7 else None
            return leaf or self.literal(type_)
        makers = {"boolean": self.boolean, "bigint": self.bigint, "double": self.double, "string": self.string,
                  "date": self.temporal, "timestamp": self.temporal}[type_]
        if r.random() < 0.15:
            return self.generic(type_, depth)
        return makers(type_, depth)

    def generic(self, type_: str, depth: int) -> E:
        """CASE, coalesce, greatest, least, nullif and CAST, for any result type."""
        r, d = self.rng, depth + 1
        kind = self.pick(["CASE WHEN", "CASE x WHEN", "coalesce", "greatest", "least", "nullif", "CAST"])
        if kind == "CASE WHEN":
            self.take(kind)
            n = r.randint(1, 2)
            conds = [self.expr("boolean", d) for _ in range(n)]
            values = [self.expr(type_, d) for _ in range(n)]
            default = self.expr(type_, d) if r.random() < 0.7 else None
            text = "CASE " + " ".join(f"WHEN {c.text} THEN {v.text}" for c, v in zip(conds, values))
            duck = "CASE " + " ".join(f"WHEN {c.duck} THEN {v.duck}" for c, v in zip(conds, values))
            text += (f" ELSE {default.text}" if default else "") + " END"
            duck += (f" ELSE {default.duck}" if default else "") + " END"
            return E(text, ATOM, duck, type_)
        if kind == "CASE x WHEN":
            self.take(kind)
            subject_type = r.choice(["bigint", "string"])
            subject = self.expr(subject_type, d)
            whens = [self.literal(subject_type) for _ in range(r.randint(1, 2))]
            values = [self.expr(type_, d) for _ in whens]
            default = self.expr(type_, d)
            text = f"CASE {subject.text} " + " ".join(f"WHEN {w.text} THEN {v.text}" for w, v in zip(whens, values)) + f" ELSE {default.text} END"
            duck = f"CASE {subject.duck} " + " ".join(f"WHEN {w.duck} THEN {v.duck}" for w, v in zip(whens, values)) + f" ELSE {default.duck} END"
            return E(text, ATOM, duck, type_)
        if kind in ("coalesce", "greatest", "least"):
            if kind != "coalesce" and type_ not in ("bigint", "double", "string"):
                kind = "coalesce"
            self.take(kind)
            types = [type_] * r.randint(2, 3)
            if type_ == "double":
                types = [r.choice(NUMERIC) for _ in types]
                types[0] = "double"
                r.shuffle(types)
            args = [self.expr(t, d) for t in types]
            duck_args = [a.duck if type_ != "double" else f"({a.duck})::DOUBLE" for a in args]
            return E(f"{kind}({', '.join(a.text for a in args)})", ATOM, f"{kind}({', '.join(duck_args)})", type_)
        if kind == "nullif":
            self.take("nullif")
            a, b = self.expr(type_, d), self.expr(type_, d)
            return E(f"nullif({a.text}, {b.text})", ATOM, f"nullif({a.duck}, {b.duck})", type_)
        sources = [s for s, t in sorted(CASTS) if t == type_] + [type_]  # sorted: a set of strings iterates by the hash seed
        source = r.choice(sources)
        inner = self.expr(source, d)
        word = r.choice(CAST_WORDS[type_])
        if inner.prec == ATOM and r.random() < 0.4:
            self.take("::")
            text = f"{inner.text}::{word}"
        else:
            self.take("CAST")
            text = f"CAST({inner.text} AS {word})"
        return E(text, ATOM, self.duck_cast(inner, source, type_), type_)

    @staticmethod
    def duck_cast(inner: E, source: str, target: str) -> str:
        x = inner.duck
        if inner.type == "null" or source == target:
            return f"TRY_CAST({x} AS {DUCK_CAST[target]})"
        if (source, target) == ("double", "bigint"):
            return f"TRY_CAST(trunc({x}) AS BIGINT)"
        if (source, target) == ("string", "bigint"):
            return f"CASE WHEN regexp_full_match({x}, '\\s*[+-]?[0-9]+\\s*') THEN TRY_CAST({x} AS BIGINT) END"
        if (source, target) == ("string", "date"):  # yyyy[-m[m][-d[d]]], then a 'T' or ' ' and anything
            date = r"\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*"
            part = [f"regexp_extract({x}, '{date}', {i})" for i in (1, 2, 3)]
            return (f"CASE WHEN regexp_full_match({x}, '{date}') THEN TRY_CAST(printf('%04d-%02d-%02d', CAST({part[0]} AS INTEGER), "
                    f"coalesce(TRY_CAST({part[1]} AS INTEGER), 1), coalesce(TRY_CAST({part[2]} AS INTEGER), 1)) AS DATE) END")
        return f"TRY_CAST({x} AS {DUCK_CAST[target]})"

    # ---- booleans ---------------------------------------------------------------------
    def comparable_pair(self, d: int) -> tuple[E, E]:
        t = self.rng.choice(["bigint", "double", "string", "boolean", "date", "timestamp", "mixed"])
        if t == "mixed":
            return self.expr("bigint", d), self.expr("double", d)
        return self.expr(t, d), self.expr(t, d)

    def boolean(self, type_: str, depth: int) -> E:
        r, d = self.rng, depth + 1
        kind = self.pick(["compare", "compare", "compare ISO literal", "AND", "OR", "NOT", "NOT (...)", "IS NULL", "IS NOT NULL",
                         "IS DISTINCT FROM", "IS NOT DISTINCT FROM", "<=>", "IN", "NOT IN", "BETWEEN", "NOT BETWEEN",
                         "LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE", "IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE",
                         "array_contains"])
        self.take(kind)
        if kind == "compare":
            a, b = self.comparable_pair(d)
            op = r.choice(["=", "<>", "!=", "<", "<=", ">", ">="])
            return E(f"{a.at(CMP)} {op} {b.at(CMP)}", CMP, f"({a.duck}) {'<>' if op == '!=' else op} ({b.duck})", "boolean")
        if kind == "compare ISO literal":
            column, values = r.choice([("day", DATES), ("ts", [v.replace("T", " ") for v in TIMESTAMPS])])
            v, op = r.choice(values), r.choice(["=", "<", ">=", "<>"])
            return E(f"{column} {op} '{v}'", CMP, f'"{column}" {op} \'{v}\'', "boolean")
        if kind in ("AND", "OR"):
            prec = AND if kind == "AND" else OR
            a, b = self.expr("boolean", d), self.expr("boolean", d)
            left = a.text if a.prec >= prec else f"({a.text})"  # left-associative
            return E(f"{left} {kind} {b.at(prec)}", prec, f"({a.duck}) {kind} ({b.duck})", "boolean")
        if kind == "NOT":
            a = self.expr("boolean", d)
            return E(f"NOT {a.text if a.prec >= NOT else f'({a.text})'}", NOT, f"NOT ({a.duck})", "boolean")
        if kind == "NOT (...)":
            a = self.expr("boolean", d)
            return E(f"NOT ({a.text})", NOT, f"NOT ({a.duck})", "boolean")
        if kind in ("IS NULL", "IS NOT NULL"):
            a = self.expr(r.choice(SCALARS), d)
            return E(f"{a.at(CMP)} {kind}", CMP, f"({a.duck}) {kind}", "boolean")
        if kind in ("IS DISTINCT FROM", "IS NOT DISTINCT FROM", "<=>"):
            a, b = self.comparable_pair(d)
            duck = "IS NOT DISTINCT FROM" if kind == "<=>" else kind
            return E(f"{a.at(CMP)} {kind} {b.at(CMP)}", CMP, f"({a.duck}) {duck} ({b.duck})", "boolean")
        if kind in ("IN", "NOT IN"):
            t = r.choice(["bigint", "string", "double"])
            a = self.expr(t, d)
            items = [self.literal(t) if r.random() < 0.7 else self.expr(t, d) for _ in range(r.randint(1, 4))]
            return E(f"{a.at(CMP)} {kind} ({', '.join(i.text for i in items)})", CMP,
                     f"({a.duck}) {kind} ({', '.join(i.duck for i in items)})", "boolean")
        if kind in ("BETWEEN", "NOT BETWEEN"):
            t = r.choice(["bigint", "double", "string", "date"])
            a, lo, hi = self.expr(t, d), self.expr(t, d), self.expr(t, d)
            return E(f"{a.at(CMP)} {kind} {lo.at(CMP)} AND {hi.at(CMP)}", CMP,
                     f"({a.duck}) {kind} ({lo.duck}) AND ({hi.duck})", "boolean")
        if kind in ("LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"):
            a = self.expr("string", d)
            if r.random() < 0.05:
                return E(f"{a.at(CMP)} {kind} NULL", CMP, f"({a.duck}) {kind} NULL", "boolean")
            pattern = sql_string("".join(r.choice(LIKE_PIECES) for _ in range(r.randint(0, 5))))
            return E(f"{a.at(CMP)} {kind} {pattern}", CMP, f"({a.duck}) {kind} {pattern} ESCAPE '\\'", "boolean")
        if kind in ("IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE"):
            a = self.expr("boolean", d)
            return E(f"{a.at(CMP)} {kind}", CMP, f"({a.duck}) {kind}", "boolean")
        # array_contains
        name, t = r.choice([("li", "bigint"), ("ls", "string")])
        x = self.expr(t, d)
        duck = (f'CASE WHEN "{name}" IS NULL OR ({x.duck}) IS NULL THEN NULL WHEN list_contains("{name}", {x.duck}) THEN TRUE '
                f'WHEN len(list_filter("{name}", v -> v IS NULL)) > 0 THEN NULL ELSE FALSE END')
        return E(f"array_contains({name}, {x.text})", ATOM, duck, "boolean")

    # ---- numbers ----------------------------------------------------------------------
    def arithmetic(self, type_: str, d: int) -> E:
        r = self.rng
        op = self.pick(["+", "-", "*", "%"] + (["/"] if type_ == "double" else []))
        self.take(op)
        if op == "/":
            a, b = self.expr(r.choice(NUMERIC), d), self.expr(r.choice(NUMERIC), d)
            duck = f"(({a.duck})::DOUBLE / NULLIF(({b.duck})::DOUBLE, 0))"
        else:
            types = ["bigint", "bigint"] if type_ == "bigint" else r.choice([["double", "double"], ["bigint", "double"], ["double", "bigint"]])
            a, b = self.expr(types[0], d), self.expr(types[1], d)
            divisor = f"NULLIF(({b.duck}), 0)" if op == "%" else f"({b.duck})"  # x % 0.0 is NaN in DuckDB
            duck = f"(({a.duck}) {op} {divisor})"
        prec = ADD if op in "+-" else MUL
        left = a.text if a.prec >= prec else f"({a.text})"
        return E(f"{left} {op} {b.at(prec)}", prec, duck, type_)

    def bigint(self, type_: str, depth: int) -> E:
        r, d = self.rng, depth + 1
        kind = self.pick(["arith", "arith", "neg", "abs", "floor", "ceil", "round", "length", "year", "month", "day",
                          "hour", "minute", "second", "cardinality", "array_size", "element_at", "cardinality split"])
        if kind == "arith":
            return self.arithmetic("bigint", d)
        self.take(kind)
        if kind == "neg":
            a = self.expr("bigint", d)
            return negated(a, "bigint")
        if kind == "abs":
            a = self.expr("bigint", d)
            return E(f"abs({a.text})", ATOM, f"abs({a.duck})", "bigint")
        if kind in ("floor", "ceil"):
            a = self.expr(r.choice(NUMERIC), d)
            word = "ceiling" if kind == "ceil" and r.random() < 0.3 else kind
            return E(f"{word}({a.text})", ATOM, f"CAST({kind}({a.duck}) AS BIGINT)", "bigint")
        if kind == "round":
            a = self.expr("bigint", d)
            return E(f"round({a.text})", ATOM, f"({a.duck})", "bigint")
        if kind == "length":
            a = self.expr("string", d)
            return E(f"length({a.text})", ATOM, f"CAST(length({a.duck}) AS BIGINT)", "bigint")
        if kind in ("year", "month", "day"):
            a = self.expr(r.choice(["date", "timestamp"]), d)
            return E(f"{kind}({a.text})", ATOM, f"CAST({kind}({a.duck}) AS BIGINT)", "bigint")
        if kind in ("hour", "minute", "second"):  # a date's time is midnight
            a = self.expr(r.choice(["date", "timestamp"]), d)
            return E(f"{kind}({a.text})", ATOM, f"CAST({kind}(CAST({a.duck} AS TIMESTAMP)) AS BIGINT)", "bigint")
        if kind == "cardinality split":
            a, sep = self.expr("string", d), r.choice(SEPARATORS)
            return E(f"cardinality(split({a.text}, {sql_string(sep)}))", ATOM,
                     f"CAST(len(string_split({a.duck}, {sql_string(sep)})) AS BIGINT)", "bigint")
        if kind in ("cardinality", "array_size"):
            name = r.choice(["li", "ls"])
            return E(f"{kind}({name})", ATOM, f'CAST(len("{name}") AS BIGINT)', "bigint")
        i = self.expr("bigint", d)
        return E(f"element_at(li, {i.text})", ATOM, f'list_extract("li", {i.duck})', "bigint")

    def double(self, type_: str, depth: int) -> E:
        r, d = self.rng, depth + 1
        kind = self.pick(["arith", "arith", "arith", "neg", "abs", "round digits"])
        if kind == "arith":
            return self.arithmetic("double", d)
        self.take(kind)
        a = self.expr("double", d)
        if kind == "neg":
            return negated(a, "double")
        if kind == "abs":
            return E(f"abs({a.text})", ATOM, f"abs({a.duck})", "double")
        self.take("round")
        digits = r.randint(0, 3)
        text = f"round({a.text}, {digits})" if digits or r.random() < 0.5 else f"round({a.text})"
        duck = f"CAST(round(CAST(CAST(({a.duck}) AS VARCHAR) AS DECIMAL(38, 28)), {digits}) AS DOUBLE)"
        return E(text, ATOM, duck, "double")

    # ---- strings ----------------------------------------------------------------------
    def string(self, type_: str, depth: int) -> E:
        r, d = self.rng, depth + 1
        kind = self.pick(["lower", "upper", "trim", "replace", "substring", "substring length", "concat", "||", "element_at",
                          "format_timestamp", "split[]"])
        self.take(kind)
        if kind == "format_timestamp":  # DuckDB's own parts, zero-padded (its %Y does not pad years)
            a = self.expr(r.choice(["date", "timestamp"]), d)
            fields = r.sample(sorted(TIMESTAMP_PARTS), r.randint(1, 3))
            separator = r.choice(["-", ":", " ", "/", "%%", "'"])
            text = separator.join(f"%{f}" for f in fields)
            shown = separator.replace("%%", "%")
            ts = f"CAST({a.duck} AS TIMESTAMP)"
            duck = f" || {sql_string(shown)} || ".join(
                f"lpad(CAST({TIMESTAMP_PARTS[f][0]}({ts}) AS VARCHAR), {TIMESTAMP_PARTS[f][1]}, '0')" for f in fields)
            return E(f"format_timestamp({sql_string(text)}, {a.text})", ATOM, f"({duck})", "string")
        if kind == "split[]":  # 1-based; below 1 is NULL (DuckDB counts negatives from the end)
            a, sep, i = self.expr("string", d), r.choice(SEPARATORS), self.expr("bigint", d)
            return E(f"split({a.text}, {sql_string(sep)})[{i.text}]", ATOM,
                     f"(CASE WHEN ({i.duck}) >= 1 THEN string_split({a.duck}, {sql_string(sep)})[{i.duck}] END)", "string")
        if kind in ("lower", "upper", "trim"):
            a = self.expr("string", d)
            return E(f"{kind}({a.text})", ATOM, f"{kind}({a.duck})", "string")
        if kind == "replace":
            a, b, c = self.expr("string", d), self.literal("string"), self.expr("string", d)
            return E(f"replace({a.text}, {b.text}, {c.text})", ATOM, f"replace({a.duck}, {b.duck}, {c.duck})", "string")
        if kind in ("substring", "substring length"):
            a, start = self.expr("string", d), self.expr("bigint", d)
            length = self.expr("bigint", d) if kind == "substring length" else None
            text = f"substring({a.text}, {start.text}{', ' + length.text if length else ''})"
            return E(text, ATOM, self.duck_substring(a.duck, start.duck, length.duck if length else None), "string")
        if kind in ("concat", "||"):
            args = [self.expr("string", d) for _ in range(r.randint(2, 3) if kind == "concat" else 2)]
            duck = "(" + " || ".join(f"({a.duck})" for a in args) + ")"
            if kind == "concat":
                return E(f"concat({', '.join(a.text for a in args)})", ATOM, duck, "string")
            return E(" || ".join(a.at(ATOM - 1) for a in args), ADD, duck, "string")
        i = self.expr("bigint", d)
        return E(f"element_at(ls, {i.text})", ATOM, f'list_extract("ls", {i.duck})', "string")

    @staticmethod
    def duck_substring(s: str, start: str, length: str | None) -> str:
        """Spark's substring in DuckDB: begin (0-based) and end computed, then clamped."""
        n = f"CAST(length({s}) AS BIGINT)"
        begin = f"(CASE WHEN ({start}) > 0 THEN ({start}) - 1 WHEN ({start}) < 0 THEN {n} + ({start}) ELSE 0 END)"
        end = n if length is None else f"({begin} + ({length}))"
        first = f"greatest({begin}, 0)"
        return (f"CASE WHEN ({s}) IS NULL OR ({start}) IS NULL{'' if length is None else f' OR ({length}) IS NULL'} THEN NULL "
                f"WHEN {first} >= {end} THEN '' ELSE substring({s}, {first} + 1, {end} - {first}) END")

    # ---- dates ------------------------------------------------------------------------
    def temporal(self, type_: str, depth: int) -> E:
        return self.generic(type_, depth)  # CAST / CASE / coalesce over dates and timestamps


def pool_row(rng: random.Random, row_id: int) -> dict:
    """A row of COLUMNS as a push record's JSON, with NULLs."""
    def pick(values, null=0.15):
        return None if rng.random() < null else rng.choice(values)

    return {
        "id": row_id, "i": pick(INTS), "j": pick(INTS), "d": pick(DOUBLES), "e": pick(DOUBLES), "s": pick(STRINGS),
        "u": pick(STRINGS), "b": pick([True, False]), "c": pick([True, False]), "day": pick(DATES), "ts": pick(TIMESTAMPS),
        "li": pick(INT_LISTS), "ls": pick(STRING_LISTS),
    }


def histories(rng: random.Random, ticks: int = 4) -> list[list[dict]]:
    """Ticks of insert / delete records: a first load, then inserts (duplicates of present
    rows among them), deletes of present rows, and a delete and reinsert of one row in
    the same tick."""
    present: list[dict] = []
    next_id = 0
    out = []
    for t in range(ticks):
        records = []
        for _ in range(rng.randint(10, 16) if t == 0 else rng.randint(2, 6)):
            if present and rng.random() < 0.25:
                row = rng.choice(present)  # a duplicate: weight 2
            else:
                row, next_id = pool_row(rng, next_id), next_id + 1
            present.append(row)
            records.append({"insert": row})
        if t > 0:
            for _ in range(min(len(present) - 1, rng.randint(1, 5))):
                row = present.pop(rng.randrange(len(present)))
                records.append({"delete": row})
            if present and rng.random() < 0.5:
                row = rng.choice(present)
                records += [{"delete": row}, {"insert": row}]
        out.append(records)
    return out
