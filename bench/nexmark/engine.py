"""A Nexmark query run incrementally through the engine, tick by tick, each tick's
integrated output compared with DuckDB running the query over every event so far.

One tick is one batch of generated events: the batch's rows of each table the query
reads, as Arrow changes (weight 1). The engine's view deltas are integrated; after the
tick DuckDB (its own tables, appended the same batch) answers the query's oracle text
(queries.ORACLE) and the two bags must be equal, else `Mismatch` names the tick and
rows. Timing covers `step` only (not the generator, not the check).
"""
from __future__ import annotations

import datetime as dt
import math
import statistics
import time
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa

from connectors.nexmark_events import SCHEMAS
from bench.nexmark.queries import ORACLE, compile_query

WEIGHT = "__w"


class Mismatch(AssertionError):
    pass


def normal(value):
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else value
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return value


def bag(rows) -> Counter:
    return Counter(tuple(normal(v) for v in row) for row in rows)


def weighted(table: pa.Table) -> pa.Table:
    return table.append_column(WEIGHT, pa.array([1] * table.num_rows, pa.int64()))


def rss_kib(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def reset_peak_rss() -> None:
    """Linux: writing 5 to clear_refs resets VmHWM (the peak RSS) to the current RSS."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def side_tables(plan) -> dict[str, pa.Table]:
    """The query's tables that are not Nexmark's, declared with a Feldera datagen plan
    (q13's `side_input`: SQL's `datagen` transport, our generator_source with `plan`):
    the plan's rows (connectors/datagen.py; seed 0 unless the connector names one), as
    the app's source would push them, typed as the table. A table other than the
    Nexmark ones without such a plan is refused."""
    from connectors.datagen import plan_rows, plan_size
    from dbsp.runtime import changes_from_records

    out = {}
    for node in plan.document.to_json()["nodes"]:
        name = node["id"]
        if node["kind"] != "input" or name in SCHEMAS:
            continue
        found = [c["config"] for c in node["params"].get("connectors") or []
                 if c["kind"] == "generator_source" and "plan" in c["config"]]
        if not found or plan_size(found[0]["plan"]) is None:
            raise ValueError(f"table {name!r} is not Nexmark's and has no datagen plan with a limit")
        schema = plan.inputs[name]
        rows = plan_rows(found[0]["plan"], [(c.name, c.type) for c in schema.columns], found[0].get("seed", 0),
                         0, plan_size(found[0]["plan"]))
        out[name] = as_table(changes_from_records([{"insert": r} for r in rows], schema), schema)
    return out


def as_table(change, schema) -> pa.Table:
    """A Z-set of a table's rows as Arrow (the data columns and the weight)."""
    from dbsp.spark.backend import arrow_schema

    target = arrow_schema(schema)
    items = list(change)
    columns = [pa.array([row[i] for row, _ in items], target.field(i).type) for i in range(len(schema.columns))]
    return pa.Table.from_arrays(columns + [pa.array([w for _, w in items], pa.int64())], schema=target)


class DuckDBOracle:
    """The events so far as DuckDB tables, appended batch by batch; the side tables
    (not Nexmark's, which may also lose rows) refilled from their contents each tick."""

    def __init__(self, tables: list[str], side: dict | None = None):
        self.db = duckdb.connect()
        for name in tables:
            empty = SCHEMAS[name].empty_table() if name in SCHEMAS else side[name].drop_columns([WEIGHT]).schema.empty_table()
            self.db.register("incoming", empty)
            self.db.execute(f"CREATE TABLE {name} AS SELECT * FROM incoming")
            self.db.unregister("incoming")

    def refill(self, name: str, rows: Counter, schema: pa.Schema) -> None:
        self.db.execute(f"DELETE FROM {name}")
        flat = [row for row, n in rows.items() for _ in range(n)]
        if flat:
            self.db.register("incoming", pa.Table.from_pylist([dict(zip(schema.names, r)) for r in flat], schema=schema))
            self.db.execute(f"INSERT INTO {name} SELECT * FROM incoming")
            self.db.unregister("incoming")

    def append(self, name: str, table: pa.Table) -> None:
        if table.num_rows:
            self.db.register("incoming", table)
            self.db.execute(f"INSERT INTO {name} SELECT * FROM incoming")
            self.db.unregister("incoming")

    def answer(self, select: str) -> Counter:
        return bag(self.db.execute(select).fetchall())

    def columns(self, select: str) -> list[str]:
        return [d[0].lower() for d in self.db.execute(f"SELECT * FROM ({select}) LIMIT 0").description]


def _difference(engine: Counter, oracle: Counter, limit: int = 3) -> str:
    extra = list((engine - oracle).items())[:limit]
    missing = list((oracle - engine).items())[:limit]
    return f"engine has {sum((engine - oracle).values())} rows more, e.g. {extra}; " \
           f"DuckDB has {sum((oracle - engine).values())} rows more, e.g. {missing}"


def make_runtime(plan, backend: str, spark=None, paths: dict | None = None):
    if backend == "reference":
        from dbsp.reference import ReferenceRuntime

        return ReferenceRuntime(plan)
    from dbsp.spark import SparkRuntime

    return SparkRuntime(plan, spark, **(paths or {}))


def run_query(name: str, batches: list[dict[str, pa.Table]], backend: str = "spark", spark=None,
              check: bool = True, paths: dict | None = None, rate: float | None = None,
              side_changes: dict[int, dict[str, pa.Table]] | None = None, keep_rows: bool = False,
              final_check: bool = False) -> dict:
    """Run query `name` over `batches` (one tick each). Returns events, seconds, events/s,
    tick latency p50/p99 (ms), peak RSS growth (MiB), output rows, ticks checked and the
    paths each node took.

    A side table (q13's `side_input`, see `side_tables`) gets its datagen plan's rows at
    tick 0, and `side_changes[tick][table]` (Arrow, with the weight column: deletes too)
    at the ticks named there; DuckDB's copy follows it. `keep_rows`: the view's rows at
    the end too (`rows`, a Counter).

    `check`: DuckDB after every tick (it re-runs the query over all events so far, so a
    long run's check costs more than the run). `final_check` without `check`: DuckDB
    once, after the last tick (peak RSS is read before it); `final_checked` says so.

    `rate` (events/s), when given, paces the input: batch k arrives k * (events before
    it) / rate seconds after the first, and its latency is from its arrival to the end
    of its tick (waiting behind a slow tick counts); events/s is then the paced rate's
    outcome, not the peak. None: batches back to back, latency = the tick's time."""
    from dbsp.arrow_change import to_zset

    plan = compile_query(name)
    (view,) = plan.views
    runtime = make_runtime(plan, backend, spark, paths)
    tables = list(plan.inputs)
    side = side_tables(plan)
    side_now = {t: Counter() for t in side}
    oracle = DuckDBOracle(tables, side) if check else None
    if oracle is not None and len(oracle.columns(ORACLE[name])) != len(plan.views[view].names):
        raise Mismatch(f"{name}: the view's columns are {plan.views[view].names}, "
                       f"the query's in DuckDB {oracle.columns(ORACLE[name])}")
    integrated, samples, latencies, events, checked = Counter(), [], [], 0, 0
    paths: dict[str, set] = {}  # node -> the paths it took (row, arrow, spark, ...)
    # lists are JSON text in an Arrow change: a view with a list column is read as rows
    as_rows = backend == "reference" or any(c.type.startswith("array<") for c in plan.schemas[view].columns)
    base_rss = rss_kib()
    reset_peak_rss()
    began = time.perf_counter()
    for tick, batch in enumerate(batches):
        arrival = began + events / rate if rate else None
        events += sum(t.num_rows for t in batch.values())  # (Nexmark's events: a side table's rows are not counted)
        changes = {}
        for table in tables:
            if table in side:
                parts = ([side[table]] if tick == 0 else []) + [(side_changes or {}).get(tick, {}).get(table)]
                parts = [p.cast(side[table].schema) for p in parts if p is not None]
                change = pa.concat_tables(parts) if parts else None
                if change is None or change.num_rows == 0:
                    continue
                for row, w in zip(change.drop_columns([WEIGHT]).to_pylist(), change[WEIGHT].to_pylist()):
                    side_now[table][tuple(row.values())] += w
                side_now[table] = +side_now[table]
            elif batch[table].num_rows:
                change = weighted(batch[table])
            else:
                continue
            changes[table] = to_zset(change, plan.inputs[table]) if backend == "reference" else change
        if arrival is not None:
            pause = arrival - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
        t0 = time.perf_counter()
        result = runtime.step(changes)
        # the delta collected on the driver: as Arrow (Structured Streaming's foreachBatch
        # collects with toArrow), Python rows for the reference evaluator
        delta = result.outputs[view] if as_rows else result.outputs_arrow()[view]
        done = time.perf_counter()
        samples.append(done - t0)
        latencies.append(done - (arrival if arrival is not None else t0))
        for node, stats in result.stats.items():
            paths.setdefault(node, set()).add(stats.get("path", "skipped"))
        if isinstance(delta, pa.Table):
            delta = zip(delta.drop_columns([WEIGHT]).to_pylist(), delta[WEIGHT].to_pylist())
            delta = ((tuple(row.values()), w) for row, w in delta)
        for row, w in delta or ():
            integrated[tuple(normal(v) for v in row)] += w
        integrated = +integrated
        if oracle is not None:
            for table in tables:
                if table in side:
                    oracle.refill(table, side_now[table], side[table].drop_columns([WEIGHT]).schema)
                else:
                    oracle.append(table, batch[table])
            expected = oracle.answer(ORACLE[name])
            if integrated != expected:
                raise Mismatch(f"{name} tick {tick}: {_difference(integrated, expected)}")
            checked += 1
    peak_rss = rss_kib("VmHWM")
    final_checked = False
    if final_check and oracle is None:
        oracle = DuckDBOracle(tables, side)
        for batch in batches:
            for table in tables:
                if table not in side:
                    oracle.append(table, batch[table])
        for table in side:  # a side table as it is after the last tick
            oracle.refill(table, side_now[table], side[table].drop_columns([WEIGHT]).schema)
        expected = oracle.answer(ORACLE[name])
        if integrated != expected:
            raise Mismatch(f"{name} after the last tick ({len(batches)}): {_difference(integrated, expected)}")
        final_checked = True
    seconds = sum(samples)
    ms = sorted(s * 1000 for s in latencies)
    return {"query": name, "backend": backend, "events": events, "ticks": len(batches), "seconds": round(seconds, 3),
            "events_per_s": round(events / seconds) if seconds else None,
            "tick_ms_p50": round(statistics.median(ms), 1),
            "tick_ms_p99": round(ms[min(len(ms) - 1, math.ceil(0.99 * len(ms)) - 1)], 1),
            "peak_rss_growth_mib": round((peak_rss - base_rss) / 1024, 1),
            "output_rows": sum(integrated.values()), "ticks_checked": checked, "final_checked": final_checked,
            "rate": rate, "paths": {node: sorted(p) for node, p in paths.items()},
            **({"rows": integrated} if keep_rows else {})}
