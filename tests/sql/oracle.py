"""The SQL oracle: DuckDB runs the views' SELECTs over the integrated tables after each
tick. It shares no code with the engine (nor with dbsp.sql): the same SQL text, another
database."""
from __future__ import annotations

import math
from collections import Counter

import duckdb

from dbsp import compile_plan
from dbsp.runtime import changes_from_records
from dbsp.sql import compile_sql


def normal(value):
    if isinstance(value, float):
        return round(value, 9) if math.isfinite(value) else value
    if isinstance(value, list):
        return tuple(normal(v) for v in value)
    return value


def bag(rows) -> Counter:
    return Counter(tuple(normal(v) for v in row) for row in rows)


class Oracle:
    """Tables as DuckDB tables, refilled from the current contents after every tick."""

    def __init__(self, tables_sql: str):
        self.db = duckdb.connect()
        self.db.execute(tables_sql)

    def refill(self, table: str, columns: list[str], rows: Counter):
        self.db.execute(f"DELETE FROM {table}")
        flat = [row for row, n in rows.items() for _ in range(n)]
        if flat:
            marks = ", ".join("?" for _ in columns)
            self.db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", [list(r) for r in flat])

    def view(self, select_sql: str) -> Counter:
        return bag(self.db.execute(select_sql).fetchall())


#: the Spark backend's execution paths: row-by-row on the driver (the default for small
#: changes), Arrow on the driver, every change as Spark jobs
SPARK_PATHS = {"driver": {}, "arrow": {"driver_max_rows": 0}, "spark": {"driver_max_rows": 0, "arrow_max_rows": 0}}


def check_against_duckdb(script: str, oracle_tables: str, views: dict[str, str], ticks: list[dict], spark=None, path="driver"):
    """Compile `script`, run it tick by tick (reference, and Spark when given: `path` a
    SPARK_PATHS name or the runtime's options themselves), and
    compare every view, integrated, with DuckDB's answer to `views[name]` (its SELECT)
    over the tables as they stand after the tick."""
    document = compile_sql(script)
    plan = compile_plan(document)
    from dbsp.reference import ReferenceRuntime

    runtimes = [ReferenceRuntime(plan)]
    if spark is not None:
        from dbsp.spark import SparkRuntime

        runtimes.append(SparkRuntime(plan, spark, **(SPARK_PATHS[path] if isinstance(path, str) else path)))
    oracle = Oracle(oracle_tables)
    tables = {name: Counter() for name in plan.inputs}
    integrated = [{view: Counter() for view in views} for _ in runtimes]
    for t, tick in enumerate(ticks):
        changes = {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}
        for name, change in changes.items():
            for row, w in change:
                tables[name][row] += w
            tables[name] = +tables[name]
            oracle.refill(name, plan.inputs[name].names, tables[name])
        for runtime, views_so_far in zip(runtimes, integrated):
            result = runtime.step(changes)
            for view in views:
                for row, w in result.outputs[view]:
                    views_so_far[view][tuple(normal(v) for v in row)] += w
                views_so_far[view] = Counter({r: w for r, w in views_so_far[view].items() if w != 0})
        for view, select in views.items():
            expected = oracle.view(select)
            for backend, views_so_far in zip(["reference", f"spark ({path} path)"], integrated):
                assert views_so_far[view] == expected, (
                    f"{backend}: view {view} after tick {t} differs from DuckDB\nSQL: {select}\n"
                    f"circuit: {sorted(views_so_far[view].items(), key=repr)}\nduckdb:  {sorted(expected.items(), key=repr)}")
