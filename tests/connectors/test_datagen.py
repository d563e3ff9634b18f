"""Feldera's datagen plans (connectors/datagen.py): SQL's `datagen` transport as our
generator_source with the plan; the rows as Feldera's generator makes them; the source
pushing exactly the plan's rows; refusals naming the setting."""
from __future__ import annotations

import pytest

from connectors.datagen import PlanError, check_plan, plan_rows
from connectors.generator import GeneratorSource
from dbsp.sql import SqlError, compile_sql
from dbsp.types import Column, Schema

COLUMNS = [("date_time", "timestamp"), ("key", "bigint"), ("value", "string")]
Q13_PLAN = [{"limit": 100, "fields": {"date_time": {"range": [1724444408000, 4102444800000]}, "key": {"range": [0, 100]}}}]


def test_increment_rows_are_feldera_s():
    rows = plan_rows(Q13_PLAN, COLUMNS, 0, 0, 1000)
    assert len(rows) == 100
    assert rows[0] == {"date_time": "2024-08-23 20:20:08", "key": 0, "value": "0"}
    assert rows[42] == {"date_time": "2024-08-23 20:20:08.042000", "key": 42, "value": "42"}
    wrapped = plan_rows([{"limit": 5, "fields": {"key": {"range": [10, 13], "scale": 2}}}], [("key", "bigint")], 0, 0, 5)
    assert [r["key"] for r in wrapped] == [10, 12, 11, 10, 12]  # a + (i * scale) mod (b - a)


def test_uniform_rows_follow_the_seed_whatever_the_slices():
    plan = [{"limit": 50, "fields": {"key": {"strategy": "uniform", "range": [0, 1000]},
                                     "value": {"strategy": "uniform", "range": [3, 6]}}}]
    whole = plan_rows(plan, COLUMNS[1:], 7, 0, 50)
    assert plan_rows(plan, COLUMNS[1:], 7, 0, 20) + plan_rows(plan, COLUMNS[1:], 7, 20, 50) == whole
    assert plan_rows(plan, COLUMNS[1:], 8, 0, 50) != whole
    assert all(0 <= r["key"] < 1000 and 3 <= len(r["value"]) < 6 for r in whole)


def test_entries_run_one_after_the_other():
    plan = [{"limit": 2, "fields": {"key": {"values": [7]}}}, {"limit": 3}]
    assert [r["key"] for r in plan_rows(plan, [("key", "bigint")], 0, 0, 10)] == [7, 7, 0, 1, 2]
    assert [r["key"] for r in plan_rows(plan, [("key", "bigint")], 0, 1, 4)] == [7, 0, 1]


@pytest.mark.parametrize("plan,words", [
    ([{"limit": 1, "fields": {"key": {"strategy": "zipf"}}}], "plan[0].fields.key.strategy: increment, uniform"),
    ([{"limit": 1, "fields": {"key": {"range": [1]}}}], "plan[0].fields.key.range: [start, end)"),
    ([{"fields": {}}, {"limit": 1}], "plan[0]: only the last entry may have no limit"),
    ([{"limit": 1, "fields": {"key": {"fake": "name"}}}], "unsupported setting 'fake'"),
])
def test_refused_plans_name_the_setting(plan, words):
    assert words in check_plan(plan)


def test_an_empty_range_is_refused_when_rows_are_made():
    with pytest.raises(PlanError, match="empty"):
        plan_rows([{"limit": 1, "fields": {"key": {"range": [5, 5]}}}], [("key", "bigint")], 0, 0, 1)


def test_the_source_pushes_the_plan_s_rows_once():
    schema = Schema(tuple(Column(n, t) for n, t in COLUMNS))
    source = GeneratorSource({"plan": Q13_PLAN}, {})
    pushed = []
    for _ in range(1000):
        items, position = source.poll(30, None, schema)
        source.advanced(position)
        pushed += [rec["insert"] for _, records in items for rec in records]
        if position["emitted"] >= 100 and not items:
            break
    assert pushed == plan_rows(Q13_PLAN, COLUMNS, 0, 0, 100)


def test_sql_reads_the_datagen_transport_as_a_generator_source_with_the_plan():
    doc = compile_sql("""CREATE TABLE side_input (date_time TIMESTAMP, key BIGINT, value VARCHAR)
        WITH ('connectors' = '[{"transport": {"name": "datagen", "config": {"workers": 2, "plan": [{"limit": 3}]}}}]');
        CREATE VIEW v AS SELECT key FROM side_input;""")
    (node,) = [n for n in doc["nodes"] if n["kind"] == "input"]
    assert node["params"]["connectors"] == [{"name": "side_input-in", "kind": "generator_source",
                                             "config": {"plan": [{"limit": 3}]}}]
    with pytest.raises(SqlError, match="transport 'datagen' is an input"):
        compile_sql("""CREATE TABLE t (a BIGINT); CREATE VIEW v WITH ('connectors' = '[{"transport": {"name": "datagen"}}]')
            AS SELECT a FROM t;""")
