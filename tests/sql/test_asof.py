"""ASOF joins in SQL (Feldera's `LEFT ASOF JOIN ... MATCH_CONDITION (...) ON ...`): the
refusals with their line:column, the operator's parameter checks, Export SQL's round
trip, explaining a matched row, and that a right change re-matches the left rows of its
keys only. (Their results against DuckDB at every tick: tests/sql/test_oracle.py's
`asof` kind and tests/dbsp/test_sql_oracle.py's `asof` case.)"""
from __future__ import annotations

import pytest

from dbsp import compile_plan
from dbsp.errors import CircuitInvalid
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.sql import SqlError, compile_sql, export_sql
from tests.dbsp.helpers import circuit, schema

TABLES = "CREATE TABLE r (a BIGINT, b BIGINT, s VARCHAR);\nCREATE TABLE t (a BIGINT, c BIGINT, v VARCHAR);\n"

# (the view, on line 3; the problem's line:column; words its message must contain)
REFUSED = [
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t ON r.a = t.a;", "3:51",
     "ASOF JOIN needs a MATCH_CONDITION"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b = t.c) ON r.a = t.a;", "3:70",
     "MATCH_CONDITION must compare a time of each side with >=, >, <= or <"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c + 1) ON r.a = t.a;", "3:70",
     "MATCH_CONDITION compares a column of each side"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= r.a) ON r.a = t.a;", "3:70",
     "a column of the left side with one of the right side"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a < t.a;", "3:85",
     "ASOF JOIN's ON takes only equalities between a column of each side, got 'r.a < t.a'"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a AND t.c > 1;",
     "3:99", "got 't.c > 1'"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c);", "3:51",
     "ASOF JOIN needs ON"),
    ("CREATE VIEW v AS SELECT r.s FROM r RIGHT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a;", "3:52",
     "RIGHT ASOF JOIN"),
    ("CREATE VIEW v AS SELECT r.s FROM r ASOF JOIN t MATCH_CONDITION (r.b >= t.c) USING (a);", "3:46",
     "ASOF JOIN ... USING"),
    ("CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.s >= t.c) ON r.a = t.a;", "3:51",
     "time 's' (string) cannot be compared with 'c' (bigint)"),
    ("CREATE RECURSIVE VIEW v AS SELECT a, b FROM r UNION SELECT v.a, t.c FROM v ASOF JOIN t MATCH_CONDITION (v.b >= t.c) "
     "ON v.a = t.a;", "3:86", "ASOF JOIN in a recursive view's step"),
]


@pytest.mark.parametrize("view,where,words", REFUSED, ids=[c[2] for c in REFUSED])
def test_refused_with_line_column(view, where, words):
    with pytest.raises(SqlError) as caught:
        compile_sql(TABLES + view)
    problems = caught.value.problems
    assert any(words in p.message for p in problems), [p.message for p in problems]
    span = next(p.span for p in problems if words in p.message)
    assert f"{span.line}:{span.column}" == where, (span, [p.message for p in problems])


def test_a_match_condition_of_two_conditions_is_refused_at_its_place():
    with pytest.raises(SqlError) as caught:
        compile_sql(TABLES + "CREATE VIEW v AS SELECT r.s FROM r LEFT ASOF JOIN t\n  MATCH_CONDITION (r.b >= t.c AND r.a = 1) ON r.a = t.a;")
    (problem,) = caught.value.problems
    assert (problem.span.line, problem.span.column) == (4, 20) and "got 'r.b >= t.c AND r.a = 1'" in problem.message, problem


def test_feldera_spellings_compile_to_one_asof_join():
    """LEFT ASOF JOIN with and without parentheses, the condition either way round, and
    DuckDB's `ASOF LEFT JOIN` order of words: each an asof_join with the same parameters."""
    texts = ["FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a",
             "FROM r LEFT ASOF JOIN t MATCH_CONDITION r.b >= t.c ON r.a = t.a",
             "FROM r LEFT ASOF JOIN t MATCH_CONDITION (t.c <= r.b) ON t.a = r.a",
             "FROM r ASOF LEFT JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a"]
    found = []
    for text in texts:
        doc = compile_sql(TABLES + f"CREATE VIEW v AS SELECT r.s, t.v {text};")
        (node,) = [n for n in doc["nodes"] if n["kind"] == "asof_join"]
        found.append(node["params"])
    assert all(p == found[0] for p in found), found
    assert found[0] == {"left_keys": ["a"], "right_keys": ["t_a"], "left_time": "b", "right_time": "c",
                        "match": ">=", "outer": True}


def test_the_operator_checks_its_parameters():
    bad = {"left_keys": ["k"], "right_keys": ["rk"], "left_time": "t", "right_time": "v", "match": "=", "outer": "yes"}
    doc = circuit({"l": schema("k:bigint", "t:bigint"), "r": schema("rk:bigint", "rt:bigint", "v:boolean")},
                  [("j", "asof_join", bad), ("o", "output", {})], ["l.out->j.left", "r.out->j.right", "j.out->o.in"])
    with pytest.raises(CircuitInvalid) as caught:
        compile_plan(doc)
    messages = " | ".join(p.message for p in caught.value.problems)
    assert "right_time: column 'v' is boolean" in messages
    assert "match must be one of >=, >, <=, <" in messages
    assert "outer must be true" in messages


def _run(text: str, ticks: list[dict]) -> list:
    plan = compile_plan(compile_sql(text))
    runtime = ReferenceRuntime(plan)
    out = []
    for tick in ticks:
        changes = {n: changes_from_records(r, plan.inputs[n]) for n, r in tick.items()}
        out.append(runtime.step(changes).outputs)
    return out


TICKS = [
    {"r": [{"insert": {"a": 1, "b": 10, "s": "x"}}, {"insert": {"a": 2, "b": 5, "s": "y"}}],
     "t": [{"insert": {"a": 1, "c": 3, "v": "p"}}, {"insert": {"a": 1, "c": 8, "v": "q"}}, {"insert": {"a": 2, "c": 1, "v": "z"}}]},
    {"t": [{"delete": {"a": 1, "c": 8, "v": "q"}}, {"insert": {"a": 1, "c": 12, "v": "w"}}]},
]


def test_export_sql_round_trips_an_asof_join():
    text = TABLES + ("CREATE VIEW v AS SELECT r.s, t.v, t.c FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b > t.c) ON r.a = t.a;\n"
                     "CREATE VIEW w AS SELECT r.s, t.v FROM r ASOF JOIN t MATCH_CONDITION (r.b <= t.c) ON r.a = t.a;")
    exported = export_sql(compile_sql(text))
    assert "LEFT ASOF JOIN" in exported and "MATCH_CONDITION (l.b > r.c)" in exported and "MATCH_CONDITION (l.b <= r.c)" in exported
    assert _run(exported, TICKS) == _run(text, TICKS)


def test_a_right_change_rematches_only_the_left_rows_of_its_key():
    """Tick 1 changes the right side of key 1 only: the view's change is the key-1 left
    row's old match retracted and its new one inserted; the key-2 row is not touched."""
    text = TABLES + "CREATE VIEW v AS SELECT r.s, t.v FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a;"
    first, second = _run(text, TICKS)
    assert dict(first["v"]) == {("x", "q"): 1, ("y", "z"): 1}
    assert dict(second["v"]) == {("x", "q"): -1, ("x", "p"): 1}


def test_the_executor_fetches_the_left_rows_of_the_changed_keys_only(monkeypatch):
    """The incremental executor asks its left trace for the keys the right change touches
    (and nothing else), and its right trace for the keys either change touches."""
    from dbsp.spark import asof
    from dbsp.spark.trace import Trace

    asked = []
    real = Trace.lookup

    def spy(self, columns, keys):
        asked.append((tuple(columns), sorted(tuple(k.values()) for k in (keys.to_pylist() if hasattr(keys, "to_pylist") else []))))
        return real(self, columns, keys)

    monkeypatch.setattr(Trace, "lookup", spy)
    from dbsp.spark import get_session
    from dbsp.spark import SparkRuntime

    text = TABLES + "CREATE VIEW v AS SELECT r.s, t.v FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a;"
    plan = compile_plan(compile_sql(text))
    runtime = SparkRuntime(plan, get_session())
    for tick in TICKS:
        asked.clear()
        runtime.step({n: changes_from_records(r, plan.inputs[n]) for n, r in tick.items()})
    assert asof.AsofJoinDelta  # (the executor under test)
    assert (("a",), [(1,)]) in asked and not any(cols == ("a",) and (2,) in keys for cols, keys in asked), asked


def test_explain_names_the_matched_right_row():
    from dbsp.explain import explain

    text = TABLES + "CREATE VIEW v AS SELECT r.s, t.v FROM r LEFT ASOF JOIN t MATCH_CONDITION (r.b >= t.c) ON r.a = t.a;"
    plan = compile_plan(compile_sql(text))
    changes = [{n: changes_from_records(r, plan.inputs[n]) for n, r in tick.items()} for tick in TICKS]
    (node,) = [n for n, op in plan.operators.items() if op.kind == "asof_join"]
    row = plan.operators[node]
    found = explain(plan, changes, 1, node, (1, 10, "x", 1, 3, "p"), mode="contents")
    labels = [g.label for g in found.contents.groups]
    assert any("nearest b = 10" in label for label in labels), labels
    assert row.kind == "asof_join"
