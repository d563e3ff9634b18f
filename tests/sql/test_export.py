"""Export SQL: a circuit -> SQL that compiles back to a circuit with the same outputs;
a node SQL cannot express is named."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbsp.sql import NotExpressible, compile_sql, export_sql
from tests.sql.test_compile import CIRCUITS, DEMOS, SQL, pushes, run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.mark.parametrize("name", DEMOS)
def test_drawn_demo_exports_to_sql_with_the_same_outputs(name):
    drawn = json.loads((CIRCUITS / f"{name}.json").read_text())
    assert run(compile_sql(export_sql(drawn)), pushes(name)) == run(drawn, pushes(name))


@pytest.mark.parametrize("name", DEMOS)
def test_compiled_demo_round_trips_through_export(name):
    compiled = compile_sql((SQL / f"{name}.sql").read_text())
    again = compile_sql(export_sql(compiled))
    assert run(again, pushes(name)) == run(compiled, pushes(name))


def test_export_of_the_seed_reads_as_sql():
    text = export_sql(json.loads((CIRCUITS / "transactions.json").read_text()))
    assert "CREATE TABLE transactions (" in text
    assert "CREATE VIEW total AS SELECT * FROM sum_of_balances;" in text
    # the engine's global sum of nothing is 0, so it exports as COALESCE(SUM(...), 0)
    assert "COALESCE(SUM(balance), 0) AS total" in text


def _with(kind_node: dict) -> dict:
    return {"nodes": [
        {"id": "a", "kind": "input", "params": {"schema": [{"name": "x", "type": "bigint"}]}},
        {"id": "b", "kind": "input", "params": {"schema": [{"name": "x", "type": "bigint"}]}},
        kind_node,
        {"id": "out", "kind": "output"},
    ], "edges": [
        {"from": {"node": "a", "port": "out"}, "to": {"node": kind_node["id"], "port": "a" if kind_node["kind"] == "difference" else "in"}},
        *([{"from": {"node": "b", "port": "out"}, "to": {"node": kind_node["id"], "port": "b"}}] if kind_node["kind"] == "difference" else []),
        {"from": {"node": kind_node["id"], "port": "out"}, "to": {"node": "out", "port": "in"}},
    ]}


def test_a_difference_is_named_as_not_expressible():
    with pytest.raises(NotExpressible) as caught:
        export_sql(_with({"id": "minus", "kind": "difference"}))
    assert caught.value.node == "minus"
    assert "EXCEPT" in str(caught.value)


def test_a_stream_primitive_is_named_as_not_expressible():
    with pytest.raises(NotExpressible) as caught:
        export_sql(_with({"id": "running", "kind": "integrate"}))
    assert caught.value.node == "running"


def test_cli_export_sql_names_the_node(tmp_path):
    from tests.sql.test_compile import cli

    path = tmp_path / "c.json"
    path.write_text(json.dumps(_with({"id": "minus", "kind": "difference"})))
    out = cli("export-sql", str(path))
    assert out.returncode == 1 and out.stderr.startswith("node 'minus':")
    good = cli("export-sql", str(CIRCUITS / "big_orders.json"))
    assert good.returncode == 0 and "WHERE amount > 100" in good.stdout


def test_window_lateness_survives_export_both_ways():
    """A drawn window's default lateness (0: later rows are dropped) exports as
    LATENESS 0; a SQL window without LATENESS (no row is late) exports without it."""
    drawn = json.loads((CIRCUITS / "sensor_windows.json").read_text())
    for node in drawn["nodes"]:
        node.get("params", {}).pop("lateness", None)
    text = export_sql(drawn)
    assert "ts TIMESTAMP NOT NULL LATENESS INTERVAL '0' DAY" in text
    assert run(compile_sql(text), pushes("sensor_windows")) == run(drawn, pushes("sensor_windows"))

    no_lateness = (SQL / "sensor_windows.sql").read_text().replace(" LATENESS INTERVAL '30' SECONDS", "")
    compiled = compile_sql(no_lateness)
    text = export_sql(compiled)
    assert "LATENESS" not in text
    assert run(compile_sql(text), pushes("sensor_windows")) == run(compiled, pushes("sensor_windows"))


ALL_OPERATORS = json.loads((Path(__file__).parent / "all_operators.json").read_text())
R_ROW = st.fixed_dictionaries({"a": st.sampled_from([0, 1, 2, None]), "b": st.sampled_from([-3, 0, 4, 7, 12, None]),
                               "Name": st.sampled_from(["x", "Y", None])})
T_ROW = st.fixed_dictionaries({"a": st.sampled_from([0, 1, 2]), "c": st.sampled_from([0, 4, 7, None])})


@st.composite
def ticks(draw):
    rows, out = [], []
    for _ in range(draw(st.integers(1, 4))):
        inserts = draw(st.lists(R_ROW, max_size=4))
        deletes = [rows.pop(i) for i in sorted(set(draw(st.lists(st.integers(0, 20), max_size=2))), reverse=True) if i < len(rows)]
        rows.extend(inserts)
        tick = {"r": [{"insert": r} for r in inserts] + [{"delete": r} for r in deletes]}
        upserts = draw(st.lists(T_ROW, max_size=2))
        if upserts:
            tick["t"] = [{"insert": r} for r in upserts]
        out.append(tick)
    return out


@settings(max_examples=40, deadline=None)
@given(ticks())
def test_every_relational_operator_exports_to_sql_with_the_same_outputs(pushes_):
    """top_k, window aggregates (a ROWS frame, a running one), left_join, semijoin, antijoin, sliding_window (its default lateness 0),
    map, distinct, a global aggregate, an upsert table, a column needing quotes."""
    exported = compile_sql(export_sql(ALL_OPERATORS))
    assert run(exported, pushes_) == run(ALL_OPERATORS, pushes_)
