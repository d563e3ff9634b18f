"""Feldera's `datagen` plans (docs.feldera.com, connectors/sources/datagen): the rows a
plan describes, as Feldera's generator (feldera/feldera crates/datagen) makes them, so
a table declared with `"transport": {"name": "datagen", "config": {"plan": [...]}}`
(Nexmark q13's side input) gets the same rows here. SQL reads that transport as our
`generator_source` with the `plan` option (dbsp/sql/connectors.py).

A plan is a list of entries `{"limit": n, "fields": {column: settings}}`, run one after
the other (an entry without `limit` runs for ever, so it must be the last). Row i of an
entry (from 0) takes, per column, by `strategy` (default `increment`):
- `increment`: BIGINT `a + (i * scale) mod (b - a)` over `range` [a, b) (no range:
  `i * scale`); DOUBLE the same as a float; TIMESTAMP `a + (i * scale) mod (b - a)`
  milliseconds (range as epoch milliseconds or RFC 3339 texts; default [1970, 2100));
  DATE the same in days; VARCHAR the text of `i * scale`; BOOLEAN `i` odd;
  with `values`: `values[i mod len]`;
- `uniform`: a value drawn uniformly from `range` (a VARCHAR: letters and digits, its
  length drawn from `range`, default [0, 25)), or from `values`; drawn from a generator
  seeded with (seed, entry, i), so row i is the same whatever the batches;
- `null_percentage`: that share of the column's values NULL (drawn as above).
Columns not named in `fields` take the defaults (`increment`, no range).
Refused, with the setting's name: other strategies (`zipf`, the string fakers), a
`range` that is empty or not two values, `scale` that is not an integer.
"""
from __future__ import annotations

import datetime as dt
import random
import string

EPOCH = dt.datetime(1970, 1, 1)
MAX_TIMESTAMP_MS = 4_102_444_800_000  # 2100-01-01, Feldera's default end
MAX_DATE_DAYS = 54_787  # 2100-01-01
STRATEGIES = ("increment", "uniform")
ALPHANUMERIC = string.ascii_letters + string.digits


class PlanError(ValueError):
    pass


def check_plan(plan) -> str | None:
    """None when `plan` is a plan this module follows, else the problem's text."""
    if not isinstance(plan, list) or not plan:
        return "plan: a non-empty list of {limit, fields}"
    for n, entry in enumerate(plan):
        where = f"plan[{n}]"
        if not isinstance(entry, dict):
            return f"{where}: an object {{limit, fields}}"
        unknown = sorted(set(entry) - {"limit", "fields", "rate"})
        if unknown:
            return f"{where}: unknown setting {unknown[0]!r} (limit, fields, rate)"
        limit = entry.get("limit")
        if limit is None and n != len(plan) - 1:
            return f"{where}: only the last entry may have no limit"
        if limit is not None and (type(limit) is not int or limit < 0):
            return f"{where}.limit: a number of rows (0 or more)"
        fields = entry.get("fields", {})
        if not isinstance(fields, dict):
            return f"{where}.fields: an object of column -> settings"
        for column, settings in fields.items():
            at = f"{where}.fields.{column}"
            if not isinstance(settings, dict):
                return f"{at}: an object of settings"
            unknown = sorted(set(settings) - {"strategy", "range", "values", "scale", "null_percentage"})
            if unknown:
                return f"{at}: unsupported setting {unknown[0]!r} (strategy, range, values, scale, null_percentage)"
            if settings.get("strategy", "increment") not in STRATEGIES:
                return f"{at}.strategy: {', '.join(STRATEGIES)} (got {settings.get('strategy')!r})"
            bounds = settings.get("range")
            if bounds is not None and (not isinstance(bounds, list) or len(bounds) != 2):
                return f"{at}.range: [start, end)"
            if type(settings.get("scale", 1)) is not int:
                return f"{at}.scale: an integer"
            values = settings.get("values")
            if values is not None and (not isinstance(values, list) or not values):
                return f"{at}.values: a non-empty list"
            share = settings.get("null_percentage", 0)
            if type(share) not in (int, float) or not 0 <= share <= 100:
                return f"{at}.null_percentage: 0 to 100"
    return None


def plan_rows(plan: list, columns, seed: int, start: int, stop: int) -> list[dict]:
    """Rows `start` .. `stop - 1` of the plan (fewer when it ends first), each a dict of
    column -> JSON value (timestamps and dates as ISO texts). `columns`: (name, type)."""
    problem = check_plan(plan)
    if problem:
        raise PlanError(problem)
    out, first = [], 0
    for n, entry in enumerate(plan):
        limit = entry.get("limit")
        end = first + limit if limit is not None else None
        lo, hi = max(start, first), stop if end is None else min(stop, end)
        for i in range(lo, hi):
            out.append(_row(entry.get("fields", {}), columns, seed, n, i - first))
        if end is None or stop <= end:
            break
        first = end
    return out


def plan_size(plan: list) -> int | None:
    """The plan's rows in all; None: no end."""
    if any(e.get("limit") is None for e in plan):
        return None
    return sum(e["limit"] for e in plan)


def _row(fields: dict, columns, seed: int, entry: int, i: int) -> dict:
    rng = random.Random(f"datagen:{seed}:{entry}:{i}")
    return {name: _value(type_, fields.get(name) or fields.get(name.lower()) or {}, i, rng) for name, type_ in columns}


def _bounds(raw, parse, default):
    if raw is None:
        return default
    a, b = (parse(x) for x in raw)
    if a >= b:
        raise PlanError(f"range {raw}: empty (start >= end)")
    return a, b


def _ms(x) -> int:
    if isinstance(x, (int, float)):
        return int(x)
    when = dt.datetime.fromisoformat(str(x).replace("Z", "+00:00"))
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return (when - EPOCH) // dt.timedelta(milliseconds=1)


def _days(x) -> int:
    return int(x) if isinstance(x, (int, float)) else (dt.date.fromisoformat(str(x)) - EPOCH.date()).days


def _value(type_: str, s: dict, i: int, rng: random.Random):
    if s.get("null_percentage") and rng.random() * 100 < s["null_percentage"]:
        return None
    uniform = s.get("strategy", "increment") == "uniform"
    scale = s.get("scale", 1)
    if s.get("values") is not None:
        return rng.choice(s["values"]) if uniform else s["values"][i % len(s["values"])]
    if type_ in ("bigint", "double"):
        bounds = s.get("range")
        if uniform:
            a, b = _bounds(bounds, int, (-(2 ** 63), 2 ** 63 - 1))
            v = rng.randrange(a, b) * scale if type_ == "bigint" else rng.uniform(a, b) * scale
        elif bounds is None:
            v = i * scale
        else:
            a, b = _bounds(bounds, int, None)
            v = a + (i * scale) % (b - a)
        return float(v) if type_ == "double" else int(v)
    if type_ == "timestamp":
        a, b = _bounds(s.get("range"), _ms, (0, MAX_TIMESTAMP_MS))
        ms = rng.randrange(a, b) * scale if uniform else a + (i * scale) % (b - a)
        return (EPOCH + dt.timedelta(milliseconds=ms)).isoformat(sep=" ")
    if type_ == "date":
        a, b = _bounds(s.get("range"), _days, (0, MAX_DATE_DAYS))
        days = rng.randrange(a, b) * scale if uniform else a + (i * scale) % (b - a)
        return (EPOCH.date() + dt.timedelta(days=days)).isoformat()
    if type_ == "string":
        if uniform:
            a, b = _bounds(s.get("range"), int, (0, 25))
            return "".join(rng.choice(ALPHANUMERIC) for _ in range(rng.randrange(a, b)))
        return str(i * scale)
    if type_ == "boolean":
        return rng.random() < 0.5 if uniform else i % 2 == 1
    return None
