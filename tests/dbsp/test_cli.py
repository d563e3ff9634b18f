"""The DBSP oracle of shared/DBSP.md, exactly, through `python -m dbsp`.

`cli` runs the real command line in a subprocess; `in_process` calls the same `main`
in the test process, whose Spark session the other engine tests share. A subprocess
on Spark starts a JVM of its own (tens of CPU seconds each): one test runs Spark
through the real command line (`test_transactions_oracle[spark]`, the session
started from the environment as `python -m dbsp` does), the other Spark runs of the
command line are in process; the reference backend's are subprocesses (no JVM)."""
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbsp import ZSet
from dbsp import __main__ as cli_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "circuits"


def cli(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "dbsp", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def in_process(*args, check=True):
    """`python -m dbsp ARGS` as `main(ARGS)` in this process: the same exit code, stdout
    and stderr (what the command prints; the JVM's own log lines are not in it)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main.main([str(a) for a in args])
    result = subprocess.CompletedProcess(["python", "-m", "dbsp", *args], code, out.getvalue(), err.getvalue())
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def integrate(lines, view):
    total, states = ZSet(), []
    for line in lines:
        rows = json.loads(line)["outputs"][view]
        total = total + ZSet((tuple(sorted(r["data"].items())), r["weight"]) for r in rows)
        states.append(total)
    return states


@pytest.mark.parametrize("backend", ["spark", "reference"])
def test_transactions_oracle(backend):
    out = cli("run", str(EXAMPLES / "transactions.json"), str(EXAMPLES / "transactions.pushes.jsonl"), "--backend", backend)
    lines = out.stdout.strip().splitlines()
    assert [json.loads(line)["tick"] for line in lines] == [0, 1, 2]
    totals = [sorted(dict(row)["total"] for row, w in state for _ in range(w)) for state in integrate(lines, "total")]
    assert totals == [[0], [20], [0]]
    final = integrate(lines, "balance")[-1]
    assert {(dict(r)["account"], dict(r)["balance"]) for r, w in final} == {(1, -30), (2, 20), (3, 10)}
    assert all(w == 1 for _, w in final)


def test_validate_lists_problems_and_exits_nonzero(tmp_path):
    doc = json.loads((EXAMPLES / "transactions.json").read_text())
    doc["nodes"][1]["params"]["aggregates"][0]["fn"] = "median"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    result = cli("validate", str(path), check=False)
    assert result.returncode == 1
    problem = json.loads(result.stdout.splitlines()[0])
    assert problem["node"] == "credits_by_account" and "unknown function 'median'" in problem["message"]
    assert json.loads(cli("validate", str(EXAMPLES / "transactions.json")).stdout) == {"valid": True}


def test_plan_shows_the_inserted_state():
    plan = json.loads(cli("plan", str(EXAMPLES / "transactions.json")).stdout)
    assert plan["mode"] == "incremental"
    by_id = {n["id"]: n for n in plan["nodes"]}
    assert by_id["by_account"]["incremental"]["form"] == "delta"
    assert by_id["balances"]["incremental"]["form"] == "linear"
    inserted = {n["id"] for n in plan["nodes"] if n.get("inserted")}
    assert {"by_account__I_left", "by_account__z_left", "by_account__I_right", "by_account__z_right"} <= inserted
    assert by_id["by_account__z_left"]["kind"] == "delay" and by_id["by_account__I_left"]["kind"] == "integrate"


def test_bad_push_file_names_the_line_and_row(tmp_path):
    pushes = tmp_path / "p.jsonl"
    pushes.write_text('{"transactions": [{"insert": {"id": 0, "from_acct": 1, "to_acct": 2, "amount": "fifty"}}]}\n')
    result = cli("run", str(EXAMPLES / "transactions.json"), str(pushes), "--backend", "reference", check=False)
    assert result.returncode == 1
    assert "p.jsonl:1: row 0, column 'amount'" in result.stderr


CLOSURES = ["01 02 03 12 13 23", "01 02 03 12 13 23 04 14 24 34", "01 23 24 34", "12 13 14 23 24 34"]


def _pairs(spec):
    return {(int(p[0]), int(p[1])) for p in spec.split()}


@pytest.mark.parametrize("backend", ["spark", "reference"])
def test_transitive_closure_oracle(backend):
    out = (in_process if backend == "spark" else cli)("run", str(EXAMPLES / "transitive_closure.json"), str(EXAMPLES / "transitive_closure.pushes.jsonl"), "--backend", backend)
    lines = out.stdout.strip().splitlines()
    states = integrate(lines, "closure")
    for t, (state, expected) in enumerate(zip(states, CLOSURES)):
        assert {(dict(r)["src"], dict(r)["dst"]): w for r, w in state} == {p: 1 for p in _pairs(expected)}, f"tick {t}"
    tick2 = json.loads(lines[2])["outputs"]["closure"]
    assert sorted((r["data"]["src"], r["data"]["dst"], r["weight"]) for r in tick2) == sorted(
        (a, b, -1) for a, b in _pairs("02 03 04 12 13 14"))


def test_stratified_negation_pairs_not_reachable():
    """not_reachable = known nodes² - closure, with the closure of each tick above."""
    out = in_process("run", str(EXAMPLES / "not_reachable.json"), str(EXAMPLES / "not_reachable.pushes.jsonl"))
    states = integrate(out.stdout.strip().splitlines(), "not_reachable")
    for t, (state, closure) in enumerate(zip(states, CLOSURES)):
        edges = [_pairs("01 12 23"), _pairs("01 12 23 34"), _pairs("01 23 34"), _pairs("12 23 34")][t]
        nodes = {n for e in edges for n in e}
        expected = {(a, b) for a in nodes for b in nodes} - _pairs(closure)
        assert {(dict(r)["src"], dict(r)["dst"]): w for r, w in state} == {p: 1 for p in expected}, f"tick {t}"


def test_a_failing_tick_names_the_node_and_operator_and_exits_nonzero(tmp_path):
    """A bigint overflow inside a map on Spark: the run stops at that tick with one line
    naming the pushes line, the tick, the node and its operator — no traceback."""
    circuit = tmp_path / "c.json"
    circuit.write_text(json.dumps({
        "nodes": [{"id": "readings", "kind": "input", "params": {"schema": [{"name": "v", "type": "bigint"}]}},
                  {"id": "scaled", "kind": "map", "params": {"columns": [{"name": "w", "expr": "v * 4"}]}},
                  {"id": "out", "kind": "output", "params": {}}],
        "edges": [{"from": {"node": "readings", "port": "out"}, "to": {"node": "scaled", "port": "in"}},
                  {"from": {"node": "scaled", "port": "out"}, "to": {"node": "out", "port": "in"}}]}))
    pushes = tmp_path / "p.jsonl"
    pushes.write_text('{"readings": [{"insert": {"v": 1}}]}\n{"readings": [{"insert": {"v": 4611686018427387904}}]}\n')
    result = in_process("run", str(circuit), str(pushes), check=False)
    assert result.returncode == 1
    assert [json.loads(line)["tick"] for line in result.stdout.splitlines()] == [0]
    assert "p.jsonl:2: tick 1: node 'scaled' (map): ValueOutOfRange" in result.stderr
    assert "Traceback" not in result.stderr
