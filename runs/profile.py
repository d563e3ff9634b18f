"""A run's operator profile and frontier over ticks, read back from its stored tick outputs.

- `run_profile`: per node, one metric's series over a range of ticks (ms, rows in/out,
  state rows, Spark jobs), its total, where each tick ran (`path`) and, for windows, the
  late rows of each tick; and the nodes that cost the most.
- `run_frontier`: per fixed point, the iterations each tick took and whether it
  converged; per window, the waterline, the windows each tick closed and the late rows.

Bounded: a request reads at most MAX_TICKS ticks (the newest of the range asked for;
`truncated` says so, and `from`/`to` page through the rest), and a series has at most
MAX_POINTS points: longer ranges are downsampled into buckets of `bucket` consecutive
ticks (a bucket's value: the sum of its ticks', or for state rows the last; the path
the heaviest of its ticks').
"""
from __future__ import annotations

import math

from circuits.services import ServiceError

from .models import Run

METRICS = ("ms", "rows_in", "rows_out", "state_rows", "spark_jobs")
#: how a metric adds up over ticks (a bucket's value and a node's total)
AGGREGATE = {"ms": "sum", "rows_in": "sum", "rows_out": "sum", "state_rows": "last", "spark_jobs": "sum"}
UNITS = {"ms": "ms", "rows_in": "rows", "rows_out": "rows", "state_rows": "rows", "spark_jobs": "jobs"}
PATHS = ("skipped", "reference", "row", "arrow", "spark")
MAX_TICKS = 5_000
MAX_POINTS = 500
TOP = 5
WINDOW_KINDS = ("tumbling_window", "sliding_window", "session_window")


def tick_range(params) -> tuple[int | None, int | None]:
    """`from` and `to` (inclusive ticks, both optional) from query parameters; 400 naming the field."""
    found = {}
    for field in ("from", "to"):
        raw = params.get(field)
        if raw in (None, ""):
            found[field] = None
            continue
        try:
            value = int(raw)
        except (TypeError, ValueError):
            value = None
        if value is None or value < 0:
            raise ServiceError(f"Query parameter '{field}' must be a tick (an integer >= 0), got {raw!r}.", 400,
                               [{"field": field, "message": "expected an integer >= 0"}])
        found[field] = value
    if found["from"] is not None and found["to"] is not None and found["to"] < found["from"]:
        raise ServiceError(f"Query parameter 'to' ({found['to']}) is before 'from' ({found['from']}).", 400,
                           [{"field": "to", "message": "must be >= from"}])
    return found["from"], found["to"]


def metric_param(params) -> str:
    metric = params.get("metric") or "ms"
    if metric not in METRICS:
        raise ServiceError(f"Query parameter 'metric' must be one of {', '.join(METRICS)}, got {metric!r}.", 400,
                           [{"field": "metric", "message": f"expected one of {', '.join(METRICS)}"}])
    return metric


def _ticks(run: Run, first: int | None, last: int | None, fields: tuple[str, ...]):
    """The stored ticks of the range, oldest first: at most MAX_TICKS, the newest ones."""
    ticks = run.ticks.all()
    if first is not None:
        ticks = ticks.filter(tick__gte=first)
    if last is not None:
        ticks = ticks.filter(tick__lte=last)
    rows = list(ticks.order_by("-tick").values_list("tick", *fields)[:MAX_TICKS + 1])
    truncated = len(rows) > MAX_TICKS
    return rows[:MAX_TICKS][::-1], truncated


def _buckets(ticks: list[int]) -> tuple[int, list[tuple[int, int]]]:
    """(ticks per bucket, [(start, end) index ranges into `ticks`])."""
    size = max(1, math.ceil(len(ticks) / MAX_POINTS))
    return size, [(i, min(i + size, len(ticks))) for i in range(0, len(ticks), size)]


def node_kinds(document: dict) -> dict[str, str]:
    """Node id -> kind, in document order, each fixed point followed by its subcircuit's nodes."""
    kinds = {}
    for node in document.get("nodes", []):
        kinds[node.get("id")] = node.get("kind")
        if isinstance(node.get("subcircuit"), dict):
            kinds.update(node_kinds(node["subcircuit"]))
    return kinds


def _number(value) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else 0


def _round(value):
    return round(value, 3) if isinstance(value, float) else value


def _heaviest(paths: list) -> str | None:
    known = [p for p in paths if p in PATHS]
    return max(known, key=PATHS.index) if known else None


def run_profile(run: Run, metric: str, first: int | None = None, last: int | None = None) -> dict:
    rows, truncated = _ticks(run, first, last, ("stats",))
    ticks = [t for t, _ in rows]
    size, buckets = _buckets(ticks)
    kinds = node_kinds(run.version.document)
    seen = {n for _, stats in rows for n in (stats or {})}
    order = [n for n in kinds if n in seen] + sorted(seen - set(kinds))
    aggregate = AGGREGATE[metric]
    nodes = []
    for node in order:
        per_tick = [(stats or {}).get(node) or {} for _, stats in rows]
        values = [_number(s.get(metric)) for s in per_tick]
        series, paths = [], []
        for start, end in buckets:
            part = values[start:end]
            series.append(_round(sum(part) if aggregate == "sum" else part[-1]))
            paths.append(_heaviest([s.get("path") for s in per_tick[start:end]]))
        total = (sum(values) if aggregate == "sum" else values[-1]) if values else 0
        entry = {
            "node": node,
            "kind": kinds.get(node),
            "series": series,
            "paths": paths,
            "total": _round(total),
            "max": _round(max(values, default=0)),
            "path_ticks": {p: sum(1 for s in per_tick if s.get("path") == p) for p in PATHS
                           if any(s.get("path") == p for s in per_tick)},
        }
        if kinds.get(node) in WINDOW_KINDS:
            late = [_number(s.get("late_rows_tick")) for s in per_tick]
            entry["late_rows"] = [sum(late[start:end]) for start, end in buckets]
            entry["late_rows_total"] = sum(late)
        nodes.append(entry)
    # a fixed point's ms, rows and state are its inner nodes' (listed too): counted once
    counted = [n for n in nodes if n["kind"] != "fixedpoint" or metric == "spark_jobs"]
    ranked = sorted((n for n in counted if n["total"] > 0), key=lambda n: -n["total"])
    grand = sum(n["total"] for n in counted)
    return {
        "metric": metric,
        "unit": UNITS[metric],
        "aggregate": aggregate,
        "from": ticks[0] if ticks else None,
        "to": ticks[-1] if ticks else None,
        "ticks": [ticks[start] for start, _ in buckets],
        "bucket": size,
        "downsampled": size > 1,
        "truncated": truncated,
        "max_ticks": MAX_TICKS,
        "nodes": nodes,
        "total": _round(grand),
        "top": [{"node": n["node"], "kind": n["kind"], "total": n["total"],
                 "share": round(n["total"] / grand, 4) if grand else 0} for n in ranked[:TOP]],
    }


def run_frontier(run: Run, first: int | None = None, last: int | None = None) -> dict:
    rows, truncated = _ticks(run, first, last, ("frontier", "stats"))
    ticks = [t for t, _, _ in rows]
    size, buckets = _buckets(ticks)
    kinds = node_kinds(run.version.document)
    fixed_points = [n for n, k in kinds.items() if k == "fixedpoint"]
    windows = [n for n, k in kinds.items() if k in WINDOW_KINDS]
    nodes = []
    for node in fixed_points:
        marks = [(frontier or {}).get(node) or {} for _, frontier, _ in rows]
        nodes.append({
            "node": node, "kind": "fixedpoint",
            "iterations": [max((_number(m.get("iteration")) for m in marks[a:b]), default=0) for a, b in buckets],
            "converged": [all(m.get("converged", True) is not False for m in marks[a:b]) for a, b in buckets],
        })
    for node in windows:
        marks = [(frontier or {}).get(node) or {} for _, frontier, _ in rows]
        stats = [(s or {}).get(node) or {} for _, _, s in rows]
        nodes.append({
            "node": node, "kind": kinds[node],
            "waterline": [marks[b - 1].get("waterline") for a, b in buckets],
            "windows_closed": [sum(_number(m.get("windows_closed")) for m in marks[a:b]) for a, b in buckets],
            "late_rows": [sum(_number(s.get("late_rows_tick")) for s in stats[a:b]) for a, b in buckets],
        })
    return {
        "from": ticks[0] if ticks else None,
        "to": ticks[-1] if ticks else None,
        "ticks": [ticks[a] for a, _ in buckets],
        "bucket": size,
        "downsampled": size > 1,
        "truncated": truncated,
        "max_ticks": MAX_TICKS,
        "nodes": nodes,
    }
