"""SQL views compile to circuits that give SQL's results: the seed's four views, and a
SQL version of every demo circuit equal to its drawn version at every tick."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.sql import compile_sql

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
CIRCUITS = ROOT / "examples" / "circuits"
SQL = ROOT / "examples" / "sql"
DEMOS = ["big_orders", "transactions", "word_count", "transitive_closure", "not_reachable", "sensor_windows", "order_tags"]


def pushes(name: str) -> list[dict]:
    return [json.loads(line) for line in (CIRCUITS / f"{name}.pushes.jsonl").read_text().splitlines() if line.strip()]


def run(document: dict, ticks: list[dict], spark=None, **spark_options) -> list[dict]:
    """Per tick, every view's change as JSON (rows sorted)."""
    plan = compile_plan(document)
    if spark is None:
        runtime = ReferenceRuntime(plan)
    else:
        from dbsp.spark import SparkRuntime

        runtime = SparkRuntime(plan, spark, **spark_options)
    out = []
    for tick in ticks:
        changes = {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}
        out.append(runtime.step(changes).outputs_json())
    return out


SEED = """
CREATE TABLE transactions (id BIGINT NOT NULL, "from" BIGINT NOT NULL, "to" BIGINT NOT NULL, amount BIGINT NOT NULL);
CREATE VIEW credits AS SELECT "to" AS account, SUM(amount) AS credits FROM transactions GROUP BY "to";
CREATE VIEW debits AS SELECT "from" AS account, SUM(amount) AS debits FROM transactions GROUP BY "from";
CREATE VIEW balance AS
  SELECT credits.account, credits - debits AS balance
  FROM credits JOIN debits ON credits.account = debits.account;
CREATE VIEW total AS SELECT SUM(balance) AS total FROM balance;
"""
SEED_PUSHES = [
    {"transactions": [{"insert": {"id": 0, "from": 1, "to": 2, "amount": 50}}]},
    {"transactions": [{"insert": {"id": 1, "from": 2, "to": 3, "amount": 30}}]},
    {"transactions": [{"insert": {"id": 2, "from": 3, "to": 1, "amount": 20}}]},
]


def integrate(results: list[dict], view: str) -> list[ZSet]:
    """The view's contents after each tick."""
    states, current = [], {}
    for tick in results:
        for rec in tick[view]:
            key = tuple(rec["data"].values())
            current[key] = current.get(key, 0) + rec["weight"]
        states.append({k: w for k, w in current.items() if w})
    return states


def test_the_seeds_four_views_give_the_seeds_results():
    results = run(compile_sql(SEED), SEED_PUSHES)
    total = integrate(results, "total")
    # after the first transaction balance is empty: SQL's SUM over no rows is NULL
    # (the drawn circuit's global sum, like PyDBSP's reader, shows 0: docs/sql.md)
    assert total == [{(None,): 1}, {(20,): 1}, {(0,): 1}]
    assert integrate(results, "balance")[-1] == {(1, -30): 1, (2, 20): 1, (3, 10): 1}
    assert integrate(results, "credits")[-1] == {(2, 50): 1, (3, 30): 1, (1, 20): 1}


def test_the_drawn_transactions_circuit_shows_0_where_sql_says_null():
    drawn = integrate(run(json.loads((CIRCUITS / "transactions.json").read_text()), pushes("transactions")), "total")
    assert drawn[0] == {(0,): 1}


@pytest.mark.parametrize("name", DEMOS)
def test_sql_version_of_each_demo_equals_its_drawn_circuit_at_every_tick(name):
    drawn = run(json.loads((CIRCUITS / f"{name}.json").read_text()), pushes(name))
    compiled = run(compile_sql((SQL / f"{name}.sql").read_text()), pushes(name))
    assert compiled == drawn
    assert any(tick[view] for tick in compiled for view in tick)  # the pushes do change the views


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


ALL_SPARK = {"driver_max_rows": 0, "arrow_max_rows": 0}


@pytest.mark.parametrize("name,path", [("transactions", ALL_SPARK), ("sensor_windows", {}), ("not_reachable", {})],
                         ids=["transactions-all-spark", "sensor_windows-driver", "not_reachable-driver"])
def test_sql_version_of_demos_on_spark_equals_the_drawn_circuit(spark, name, path):
    """On Spark, on the all-Spark-jobs path or the driver's (windows without lateness run
    all-Spark below; the DuckDB oracle's Spark sample covers the Arrow path). Up to ~30 s
    with the JVM's start."""
    drawn = run(json.loads((CIRCUITS / f"{name}.json").read_text()), pushes(name))
    assert run(compile_sql((SQL / f"{name}.sql").read_text()), pushes(name), spark=spark, **path) == drawn


def test_windows_without_lateness_count_every_row_on_both_backends(spark):
    """Without LATENESS a row arriving after later ones still counts (SQL), on Spark jobs
    too (the 'never late' lateness does not overflow there). 30-45 s on a busy machine: all-Spark windows."""
    text = (SQL / "sensor_windows.sql").read_text().replace(" LATENESS INTERVAL '30' SECONDS", "")
    text = text[:text.index("CREATE VIEW sensor_sessions")]  # the tumbling window
    ticks = pushes("sensor_windows")[:3]
    reference, on_spark = run(compile_sql(text), ticks), run(compile_sql(text), ticks, spark=spark, **ALL_SPARK)
    assert on_spark == reference
    late = {"sensor": "s1", "window_start": "2026-11-21T10:00:00", "window_end": "2026-11-21T10:01:00"}
    # tick 2 pushes 10:00:50 after 10:01:30 was seen: it joins its window's average
    assert any(rec["data"]["avg_value"] == (20.0 + 22.0 + 100.0) / 3 and all(rec["data"][k] == v for k, v in late.items())
               for rec in reference[2]["sensor_averages"])


@pytest.mark.parametrize("name", DEMOS)
def test_every_node_carries_its_source_span_and_the_document_fits_the_schema(name):
    text = (SQL / f"{name}.sql").read_text()
    document = compile_sql(text)
    schema = json.loads((ROOT / "dbsp" / "circuit.schema.json").read_text())
    jsonschema.validate(document, schema)
    lines = text.split("\n")

    def nodes(level):
        for n in level["nodes"]:
            yield n
            if "subcircuit" in n:
                yield from nodes(n["subcircuit"])

    for node in nodes(document):
        span = node["source"]
        start, end = span["start"], span["end"]
        assert (start["line"], start["column"]) <= (end["line"], end["column"]), node
        assert 1 <= start["column"] <= len(lines[start["line"] - 1]), node


def test_source_spans_point_at_the_sql_that_made_the_node():
    text = (SQL / "transactions.sql").read_text()
    document = compile_sql(text)
    lines = text.split("\n")
    by_id = {n["id"]: n for n in document["nodes"]}

    def covered(node_id):
        s, e = by_id[node_id]["source"]["start"], by_id[node_id]["source"]["end"]
        if s["line"] == e["line"]:
            return lines[s["line"] - 1][s["column"] - 1:e["column"]]
        return "\n".join([lines[s["line"] - 1][s["column"] - 1:]] + lines[s["line"]:e["line"] - 1] + [lines[e["line"] - 1][:e["column"]]])

    assert covered("credits") == "credits"  # the output: the view's name
    assert covered("credits_group_by") == "to_acct"  # GROUP BY to_acct
    assert covered("balance_join").startswith("debits d ON c.to_acct = d.from_acct")


def test_views_may_use_views_and_local_views_are_not_outputs():
    document = compile_sql("""
        CREATE TABLE t (k BIGINT, v BIGINT);
        CREATE LOCAL VIEW doubled AS SELECT k, v * 2 AS v2 FROM t;
        CREATE MATERIALIZED VIEW big AS SELECT k FROM doubled WHERE v2 > 10;
    """)
    outputs = [n["id"] for n in document["nodes"] if n["kind"] == "output"]
    assert outputs == ["big"]
    results = run(document, [{"t": [{"insert": {"k": 1, "v": 6}}, {"insert": {"k": 2, "v": 5}}]}])
    assert results[0]["big"] == [{"data": {"k": 1}, "weight": 1}]


def test_primary_key_makes_an_upsert_input():
    document = compile_sql("""
        CREATE TABLE stock (sku VARCHAR NOT NULL PRIMARY KEY, qty BIGINT);
        CREATE VIEW total AS SELECT SUM(qty) AS qty FROM stock;
    """)
    assert document["nodes"][0]["params"]["primary_key"] == ["sku"]
    results = integrate(run(document, [{"stock": [{"insert": {"sku": "a", "qty": 5}}]}, {"stock": [{"insert": {"sku": "a", "qty": 7}}]}]), "total")
    assert results == [{(5,): 1}, {(7,): 1}]  # the second insert replaced the first


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "dbsp", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_cli_sql_prints_the_document_and_run_accepts_a_sql_file():
    out = cli("sql", "examples/sql/transactions.sql")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == compile_sql((SQL / "transactions.sql").read_text())
    ran = cli("run", "examples/sql/transactions.sql", "examples/circuits/transactions.pushes.jsonl", "--backend", "reference")
    assert ran.returncode == 0, ran.stderr
    ticks = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [t["outputs"] for t in ticks] == run(json.loads((CIRCUITS / "transactions.json").read_text()), pushes("transactions"))


def test_cli_reports_sql_problems_with_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.sql"
    bad.write_text("CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS\n  SELECT b FROM t;\n")
    out = cli("sql", str(bad))
    assert out.returncode == 1
    assert out.stderr.strip() == f"{bad}:3:10: unknown column 'b' (columns: t.a)"
    assert out.stdout == ""


FELDERA_CLOSURE = """
CREATE TABLE edges (src BIGINT NOT NULL, dst BIGINT NOT NULL);
DECLARE RECURSIVE VIEW closure (src BIGINT, dst BIGINT);
CREATE MATERIALIZED VIEW closure AS
SELECT src, dst FROM edges
UNION
SELECT p.src, e.dst FROM closure p JOIN edges e ON p.dst = e.src;
"""


def test_feldera_style_declared_recursive_view_equals_the_drawn_closure():
    drawn = run(json.loads((CIRCUITS / "transitive_closure.json").read_text()), pushes("transitive_closure"))
    assert run(compile_sql(FELDERA_CLOSURE), pushes("transitive_closure")) == drawn


def test_a_recursive_views_declaration_must_match_its_query():
    from dbsp.sql import SqlError

    with pytest.raises(SqlError) as caught:
        compile_sql(FELDERA_CLOSURE.replace("dst BIGINT)", "dst VARCHAR)"))
    problem = caught.value.problems[0]
    assert (problem.span.line, problem.span.column) == (3, 24)
    assert "declared (src bigint, dst string) but its query gives (src bigint, dst bigint)" in problem.message
