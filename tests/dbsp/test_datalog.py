"""The Datalog front end: what a program compiles to (strata, fixed points, antijoins,
source spans), the language's features run on the reference, every kind of refusal
with its rule and line:column, and the command line."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from dbsp import compile_plan, validate
from dbsp.datalog import DatalogInvalid, compile_program, schemas_from_pushes
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "datalog" / "reachability.dl"
DEMO_PUSHES = ROOT / "examples" / "datalog" / "reachability.pushes.jsonl"


def walk(nodes):
    for n in nodes:
        yield n
        yield from walk(n.get("subcircuit", {}).get("nodes", []))


def views_after(text, ticks, schemas=None):
    """Run a program on the reference; the integrated views after the last tick, as sets."""
    plan = compile_plan(compile_program(text, schemas))
    rt = ReferenceRuntime(plan)
    views = {v: {} for v in plan.views}
    for tick in ticks:
        out = rt.step({k: changes_from_records(v, plan.inputs[k]) for k, v in tick.items()}).outputs
        for v, z in out.items():
            for row, w in z:
                views[v][row] = views[v].get(row, 0) + w
    assert all(w == 1 for rows in views.values() for w in rows.values() if w), views  # a set
    return {v: {r for r, w in rows.items() if w} for v, rows in views.items()}


def refused(text, schemas=None) -> list[dict]:
    with pytest.raises(DatalogInvalid) as e:
        compile_program(text, schemas)
    return [p.as_dict() for p in e.value.problems]


def ins(rel_rows):
    return {rel: [{"insert": row} for row in rows] for rel, rows in rel_rows.items()}


# ---- what a program compiles to ---------------------------------------------------------------
def test_the_demo_compiles_to_a_valid_document_with_strata_and_spans():
    text = DEMO.read_text()
    doc = compile_program(text)
    schema = json.loads((ROOT / "dbsp" / "circuit.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert validate(doc) == []
    top = {n["id"]: n for n in doc["nodes"]}
    # inputs and views named after the relations
    assert top["edge"]["kind"] == "input" and [c["name"] for c in top["edge"]["params"]["schema"]] == ["src", "dst"]
    assert top["reach"]["kind"] == "output" and top["unreachable"]["kind"] == "output"
    # the recursive stratum is one fixed point: import edge, reach's previous iteration, export
    (fp,) = [n for n in doc["nodes"] if n["kind"] == "fixedpoint"]
    inner = {n["kind"] for n in fp["subcircuit"]["nodes"]}
    assert {"import", "delay", "export", "join", "distinct", "union"} <= inner
    assert not {"antijoin", "input", "output"} & inner
    # node and unreachable are not recursive: at the top level; the negation is an antijoin
    # whose right side comes out of the fixed point
    (anti,) = [n for n in doc["nodes"] if n["kind"] == "antijoin"]
    right = next(e["from"] for e in doc["edges"] if e["to"] == {"node": anti["id"], "port": "right"})
    assert right["node"] == fp["id"]
    # every node says where it comes from; a rule's nodes carry the rule's span
    lines = text.split("\n")
    for n in walk(doc["nodes"]):
        src = n["source"]
        assert 1 <= src["line"] <= len(lines) and src["column"] >= 1, n
        if "rule" in src:  # the rule's first character: its head
            assert re.match(r"\w+\(.*:-", lines[src["line"] - 1][src["column"] - 1:]), n
    assert anti["source"]["rule"] == 5 and lines[anti["source"]["line"] - 1].startswith("unreachable(x, y) :-")


def test_recursion_runs_as_semi_naive_delta_per_iteration():
    """The fixed point's body is relational, so the engine runs each inner node's Δ form
    per iteration (DBSP's incremental rule: semi-naive evaluation, deletions included),
    not a loop the compiler wrote."""
    plan = compile_plan(compile_program(DEMO.read_text()))
    (fp,) = [op for op in plan.operators.values() if op.kind == "fixedpoint"]
    assert fp.relational_body
    described = plan.describe()
    (fp_json,) = [n for n in described["nodes"] if n["kind"] == "fixedpoint"]
    forms = {n["kind"]: n["incremental"]["form"] for n in fp_json["subcircuit"]["nodes"]}
    assert forms["join"] == "delta per iteration" and forms["distinct"] == "delta per iteration"


def test_the_dbsp_oracle_through_datalog():
    """shared/DBSP.md's transitive-closure oracle: deleting (1,2) retracts exactly
    02 03 04 12 13 14; the complement gains exactly those pairs."""
    plan = compile_plan(compile_program(DEMO.read_text()))
    rt = ReferenceRuntime(plan)
    ticks = [json.loads(line) for line in DEMO_PUSHES.read_text().splitlines()]
    outs = [rt.step({k: changes_from_records(v, plan.inputs[k]) for k, v in t.items()}).outputs for t in ticks]
    removed = {(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)}
    assert dict(outs[2]["reach"]) == dict.fromkeys(removed, -1)
    assert dict(outs[2]["unreachable"]) == dict.fromkeys(removed, 1)


# ---- language features --------------------------------------------------------------------
def test_constants_repeated_variables_arithmetic_and_assignments():
    program = """
    .decl edge(src: number, dst: number, label: symbol)
    loop(x) :- edge(x, x, _).
    labelled(x, y) :- edge(x, y, "it's").
    from_one(y) :- edge(1, y, _).
    next(x, y, d) :- edge(x, y, _), d = y - x, d > 0.
    scaled(x, y * 10 + 1) :- edge(x, y, _), x < 2.
    half(x, h) :- edge(x, _, _), h = x / 2.
    """
    rows = [(1, 1, "a"), (1, 3, "it's"), (2, 0, "b"), (0, 1, "c")]
    views = views_after(program, [ins({"edge": [dict(zip(("src", "dst", "label"), r)) for r in rows]})])
    assert views["loop"] == {(1,)}
    assert views["labelled"] == {(1, 3)}
    assert views["from_one"] == {(1,), (3,)}
    assert views["next"] == {(1, 3, 2), (0, 1, 1)}
    assert views["scaled"] == {(1, 11), (1, 31), (0, 11)}
    assert views["half"] == {(1, 0.5), (2, 1.0), (0, 0.0)}


def test_negation_with_constants_and_without_variables():
    program = """
    .decl item(id: number)
    .decl blocked(id: number, level: number)
    .decl stop(flag: boolean)
    open(x) :- item(x), !blocked(x, 3).
    running(x) :- item(x), not stop(true).
    """
    views = views_after(program, [ins({"item": [{"id": 1}, {"id": 2}], "blocked": [{"id": 1, "level": 3}, {"id": 2, "level": 4}]})])
    assert views["open"] == {(2,)} and views["running"] == {(1,), (2,)}
    views = views_after(program, [ins({"item": [{"id": 1}], "stop": [{"flag": True}]})])
    assert views["running"] == set() and views["open"] == {(1,)}


def test_products_strings_doubles_and_mutual_recursion():
    program = """
    .decl person(name: symbol)
    .decl score(name: symbol, s: float)
    pair(a, b) :- person(a), person(b), a < b.
    good(a) :- score(a, s), s >= 2.5.
    even(0) :- person(_).
    odd(y) :- even(x), y = x + 1, y < 5.
    even(y) :- odd(x), y = x + 1, y < 5.
    .output pair, good, even, odd
    """
    views = views_after(program, [ins({"person": [{"name": "ann"}, {"name": "bob"}], "score": [{"name": "ann", "s": 2.5}, {"name": "bob", "s": 1}]})])
    assert views["pair"] == {("ann", "bob")} and views["good"] == {("ann",)}
    assert views["even"] == {(0,), (2,), (4,)} and views["odd"] == {(1,), (3,)}
    doc = compile_program(program)
    (fp,) = [n for n in doc["nodes"] if n["kind"] == "fixedpoint"]
    assert {n["id"] for n in fp["subcircuit"]["nodes"] if n["kind"] == "export"} == {"even_out", "odd_out"}


def test_input_schemas_from_pushes():
    pushes = [{"edge": [{"insert": {"a": 1, "b": "x"}}, {"delete": {"a": 2, "b": "y"}}]}, {"w": [{"weight": 2, "data": {"v": 1.5}}]}]
    schemas = schemas_from_pushes(pushes)
    assert schemas == {"edge": [{"name": "a", "type": "bigint", "nullable": False}, {"name": "b", "type": "string", "nullable": False}],
                       "w": [{"name": "v", "type": "double", "nullable": False}]}
    views = views_after("r(y, x) :- edge(x, y).", [ins({"edge": [{"a": 1, "b": "x"}]})], schemas)
    assert views["r"] == {("x", 1)}


# ---- refusals, each at its rule and line:column -------------------------------------------------
def one(problems) -> dict:
    assert len(problems) == 1, problems
    return problems[0]


def test_syntax_errors_name_line_and_column():
    p = one(refused(".decl e(a: number)\nr(x) :- e(x)\nq(x) :- r(x)."))
    assert (p["line"], p["column"]) == (3, 1) and "syntax error" in p["message"]
    p = one(refused(".decl e(a: number)\nr(x) :- e(x) $ 1."))
    assert (p["line"], p["column"]) == (2, 14) and "'$'" in p["message"]
    p = one(refused("r(x) :- e(x"))
    assert "ends in the middle" in p["message"]


def test_unsafe_variables():
    problems = refused(".decl e(a: number)\nr(x, y) :- e(x).\ns(x) :- e(x), !t(x, z), z > 1.\n.decl t(a: number, b: number)")
    assert [(p["line"], p["column"], p["rule"]) for p in problems] == [(2, 6, 1), (3, 21, 2), (3, 25, 2)]
    assert "unsafe variable y" in problems[0]["message"] and "rule 1 (r, line 2:1)" in problems[0]["message"]
    assert "negated atom" in problems[1]["message"] and "comparison" in problems[2]["message"]
    p = one(refused(".decl e(a: number)\nr(_) :- e(_)."))
    assert "_ in a head" in p["message"] and (p["line"], p["column"]) == (2, 3)


def test_arity_unknown_relations_and_directives():
    p = one(refused(".decl e(a: number, b: number)\nr(x) :- e(x)."))
    assert "e has 2 columns" in p["message"] and (p["line"], p["column"], p["rule"]) == (2, 9, 1)
    p = one(refused("r(x) :- nowhere(x)."))
    assert "unknown relation 'nowhere'" in p["message"] and (p["line"], p["column"]) == (1, 9)
    problems = refused(".decl e(a: number)\nr(x) :- e(x).\n.input r\n.output zz")
    assert ["derived by rules" in problems[0]["message"], "no relation 'zz'" in problems[1]["message"]] == [True, True]
    assert [(p["line"], p["column"]) for p in problems] == [(3, 8), (4, 9)]
    p = one(refused(".decl e(a: number)\n.decl e(b: number)"))
    assert "declared twice" in p["message"] and p["line"] == 2
    p = one(refused(".decl e(__w: number)"))
    assert "column '__w'" in p["message"] and (p["line"], p["column"]) == (1, 9)
    views = views_after(".decl e(a: number)\nr(x) :- e(x).\n.output e, r", [ins({"e": [{"a": 1}]})])
    assert views == {"e_view": {(1,)}, "r": {(1,)}}  # an input shown as a view
    p = one(refused(".decl e(a: text)"))
    assert "unknown type 'text'" in p["message"] and (p["line"], p["column"]) == (1, 9)
    p = one(refused(".decl e(a: number)\ne(1)."))
    assert "a fact in the program text" in p["message"] and p["line"] == 2


def test_type_errors():
    p = one(refused(".decl e(a: number)\n.decl n(s: symbol)\nr(x) :- e(x), n(x)."))
    assert "x is bigint (as e.a) but string as n.s" in p["message"] and (p["line"], p["column"], p["rule"]) == (3, 17, 1)
    p = one(refused('.decl e(a: number)\nr(1) :- e("one").'))
    assert "the constant 'one' is string" in p["message"] and (p["line"], p["column"]) == (2, 11)
    p = one(refused('.decl e(a: number)\nr(y) :- e(x), y = x + "a".'))
    assert "type error in x + 'a'" in p["message"] and p["line"] == 2
    p = one(refused('.decl e(a: number)\n.decl r(s: symbol)\nr(x) :- e(x).'))
    assert "r.s is string, this rule derives bigint" in p["message"] and (p["line"], p["column"]) == (3, 3)
    p = one(refused('.decl e(a: number)\nr(x) :- r(x), e(x).'))
    assert "cannot infer the column types of 'r'" in p["message"]


def test_unstratifiable_programs_name_the_rules_of_the_negative_cycle():
    program = """.decl node(x: number)
.decl edge(a: number, b: number)
win(x) :- edge(x, y), !win(y).
"""
    p = one(refused(program))
    assert "not stratifiable" in p["message"] and (p["line"], p["column"], p["rule"]) == (3, 23, 1)
    assert "rule 1 at line 3:1: win(x) :- edge(x, y), !win(y)." in p["message"]
    program = """.decl node(x: number)
p(x) :- node(x), !q(x).
r(x) :- p(x).
q(x) :- r(x), node(x).
ok(x) :- node(x), !q(x).
"""
    p = one(refused(program))
    assert (p["line"], p["rule"]) == (2, 1)
    for text in ("rule 1 at line 2:1: p(x) :- node(x), !q(x).", "rule 3 at line 4:1: q(x) :- r(x), node(x).",
                 "rule 2 at line 3:1: r(x) :- p(x)."):
        assert text in p["message"]
    assert "rule 4" not in p["message"]  # ok/1 negates q from a higher stratum: fine


def test_every_problem_at_once():
    problems = refused(".decl e(a: number)\nr(x, y) :- e(x).\ns(x) :- e(x, x).\nt(x) :- u(x).")
    assert {p["rule"] for p in problems} >= {2, 3}
    assert len(problems) >= 2


# ---- the command line ------------------------------------------------------------------------
def cli(*args):
    return subprocess.run([sys.executable, "-m", "dbsp", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_prints_the_circuit_and_runs_a_program():
    done = cli("datalog", str(DEMO))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == compile_program(DEMO.read_text())
    done = cli("run", str(DEMO), str(DEMO_PUSHES), "--backend", "reference")
    assert done.returncode == 0, done.stderr
    ticks = [json.loads(line) for line in done.stdout.splitlines()]
    assert [len(t["outputs"]["reach"]) for t in ticks] == [6, 4, 6, 4]
    assert {(r["data"]["x"], r["data"]["y"], r["weight"]) for r in ticks[2]["outputs"]["reach"]} == \
        {(0, 2, -1), (0, 3, -1), (0, 4, -1), (1, 2, -1), (1, 3, -1), (1, 4, -1)}
    done = cli("plan", str(DEMO))
    assert done.returncode == 0 and json.loads(done.stdout)["mode"] == "incremental"


def test_cli_refuses_a_bad_program_naming_line_and_column(tmp_path):
    bad = tmp_path / "bad.dl"
    bad.write_text(".decl e(a: number)\nr(x, y) :- e(x).\n")
    done = cli("datalog", str(bad))
    assert done.returncode == 1 and done.stdout == ""
    (problem,) = [json.loads(line) for line in done.stderr.splitlines()]
    assert (problem["line"], problem["column"], problem["rule"]) == (2, 6, 1) and problem["file"] == str(bad)


def test_cli_types_undeclared_inputs_from_the_pushes(tmp_path):
    program = tmp_path / "tc.dl"
    program.write_text("reach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n")
    done = cli("run", str(program), str(DEMO_PUSHES), "--backend", "reference")
    assert done.returncode == 0, done.stderr
    assert [len(json.loads(line)["outputs"]["reach"]) for line in done.stdout.splitlines()] == [6, 4, 6, 4]
    done = cli("datalog", str(program))
    assert done.returncode == 1 and "unknown relation 'edge'" in done.stderr


def test_input_relations_are_sets():
    """A fact is in while its weight is positive: deleting two absent edges must not
    derive a two-hop path from the product of their negative weights, and a fact pushed
    twice stays after one delete."""
    program = ".decl edge(src: number, dst: number)\ntwo(x, z) :- edge(x, y), edge(y, z).\none(x, y) :- edge(x, y)."
    absent = [{"edge": [{"delete": {"src": 1, "dst": 2}}, {"delete": {"src": 2, "dst": 3}}]}]
    assert views_after(program, absent) == {"two": set(), "one": set()}
    twice = [ins({"edge": [{"src": 1, "dst": 2}, {"src": 1, "dst": 2}, {"src": 2, "dst": 3}]}),
             {"edge": [{"delete": {"src": 1, "dst": 2}}]}]
    assert views_after(program, twice) == {"two": {(1, 3)}, "one": {(1, 2), (2, 3)}}


def test_two_recursive_strata_with_a_negation_between():
    """A recursive stratum over the negation of another: two fixed points, the second
    importing the first's export through an antijoin."""
    program = """
    .decl edge(src: number, dst: number)
    reach(x, y) :- edge(x, y).
    reach(x, z) :- reach(x, y), edge(y, z).
    node(x) :- edge(x, _).
    node(x) :- edge(_, x).
    back(x, y) :- node(x), node(y), x != y, !reach(x, y).
    back_path(x, y) :- back(x, y).
    back_path(x, z) :- back_path(x, y), back(y, z).
    .output back_path
    """
    doc = compile_program(program)
    assert [n["id"] for n in doc["nodes"] if n["kind"] == "fixedpoint"] == ["reach_fixpoint", "back_path_fixpoint"]
    edges = [(0, 1), (1, 2), (3, 2)]
    views = views_after(program, [ins({"edge": [{"src": a, "dst": b} for a, b in edges]})])
    reach = {(0, 1), (1, 2), (0, 2), (3, 2)}
    nodes = {0, 1, 2, 3}
    back = {(x, y) for x in nodes for y in nodes if x != y and (x, y) not in reach}
    path = set(back)
    while more := {(x, z) for x, y in path for y2, z in back if y == y2} - path:
        path |= more
    assert views == {"back_path": path}
