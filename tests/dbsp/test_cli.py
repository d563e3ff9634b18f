"""The DBSP oracle of shared/DBSP.md, exactly, through `python -m dbsp`."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbsp import ZSet

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "circuits"


def cli(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "dbsp", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
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
