"""Input tables in the engine (dbsp/inputs.py) and on the command line: a tick that
deletes a row an input does not hold is refused naming the record and the row, unless
the input has `allow_negative`; `--verify` compares every tick with the reference."""
import json

import pytest

from dbsp import compile_plan
from dbsp import __main__ as cli_main
from dbsp.errors import DataInvalid
from dbsp.inputs import InputTable, checks_deletes
from dbsp.runtime import TickResult, changes_and_items
from dbsp.validate import validate
from tests.dbsp.test_cli import EXAMPLES, cli, in_process

ADA = {"id": 1, "customer": "ada", "amount": 250}


def big_orders(**params):
    doc = json.loads((EXAMPLES / "big_orders.json").read_text())
    doc["nodes"][0]["params"].update(params)
    return doc


def write(tmp_path, doc, ticks):
    circuit, pushes = tmp_path / "c.json", tmp_path / "p.jsonl"
    circuit.write_text(json.dumps(doc))
    pushes.write_text("".join(json.dumps(t) + "\n" for t in ticks))
    return str(circuit), str(pushes)


def test_the_cli_refuses_a_delete_of_an_absent_row(tmp_path):
    circuit, pushes = write(tmp_path, big_orders(), [
        {"orders": [{"insert": ADA}, {"delete": ADA}, {"insert": ADA}]},
        {"orders": [{"delete": {**ADA, "amount": 125}}]},
    ])
    result = cli("run", circuit, pushes, "--backend", "reference", check=False)
    assert result.returncode == 1
    assert [json.loads(line)["tick"] for line in result.stdout.splitlines()] == [0]
    assert result.stderr.strip() == f'{pushes}:2: record 0: orders has no row {{"id": 1, "customer": "ada", "amount": 125}} to delete'


def test_allow_negative_inputs_take_any_weight(tmp_path):
    circuit, pushes = write(tmp_path, big_orders(allow_negative=True), [{"orders": [{"delete": ADA}]}])
    result = cli("run", circuit, pushes, "--backend", "reference")
    assert json.loads(result.stdout)["outputs"]["big_orders"] == [{"data": ADA, "weight": -1}]


def test_allow_negative_is_a_boolean_and_not_for_keyed_tables():
    [problem] = validate(big_orders(allow_negative="yes"))
    assert (problem.node, problem.param) == ("orders", "allow_negative")
    [problem] = validate(big_orders(allow_negative=True, primary_key=["id"]))
    assert "primary_key" in problem.message and problem.param == "allow_negative"
    assert checks_deletes(compile_plan(big_orders()), "orders")
    assert not checks_deletes(compile_plan(big_orders(allow_negative=True)), "orders")
    assert not checks_deletes(compile_plan(big_orders(primary_key=["id"])), "orders")


def test_an_input_table_counts_copies_and_earlier_records():
    plan = compile_plan(big_orders())
    table = InputTable("orders", plan.inputs["orders"], checked=True)
    change, items = changes_and_items([{"weight": 2, "data": ADA}], plan.inputs["orders"])
    table.check(items)
    table.apply(change)
    _, items = changes_and_items([{"delete": ADA}, {"insert": ADA}, {"weight": -2, "data": ADA}], plan.inputs["orders"])
    table.check(items)  # 2 - 1 + 1 - 2 = 0
    _, items = changes_and_items([{"delete": ADA}, {"weight": -2, "data": ADA}], plan.inputs["orders"])
    with pytest.raises(DataInvalid) as refused:
        table.check(items)
    assert [p.message for p in refused.value.problems] == [
        'record 1: orders holds 1 of row {"id": 1, "customer": "ada", "amount": 250}; it cannot delete 2']


@pytest.mark.parametrize("example", ["transactions", "transitive_closure", "sensor_windows", "order_tags", "word_count", "not_reachable"])
def test_verify_passes_on_the_examples_with_the_reference_backend(example, capsys):
    argv = ["run", str(EXAMPLES / f"{example}.json"), str(EXAMPLES / f"{example}.pushes.jsonl"), "--backend", "reference", "--verify"]
    assert cli_main.main(argv) == 0, capsys.readouterr().err


def test_verify_passes_on_spark():
    """Spark's incremental engine against the reference at every tick, through the
    command line's `main` in this process (its Spark session: a subprocess would start
    a JVM of its own; tests/dbsp/test_cli.py runs Spark through the real command line)."""
    result = in_process("run", str(EXAMPLES / "transactions.json"), str(EXAMPLES / "transactions.pushes.jsonl"), "--verify")
    assert len(result.stdout.splitlines()) == 3


def test_verify_prints_the_differing_rows_and_exits_nonzero(tmp_path, monkeypatch, capsys):
    """The incremental outputs are tampered with (a row of tick 1 dropped): --verify says so."""
    real = TickResult.outputs_json

    def tampered(self):
        out = real(self)
        if self.tick == 1:
            out["big_orders"] = out["big_orders"][1:]
        return out

    monkeypatch.setattr(TickResult, "outputs_json", tampered)
    bob, cy = {"id": 2, "customer": "bob", "amount": 300}, {"id": 3, "customer": "cy", "amount": 120}
    circuit, pushes = write(tmp_path, big_orders(), [{"orders": [{"insert": ADA}]}, {"orders": [{"insert": bob}, {"insert": cy}]},
                                                     {"orders": []}])
    assert cli_main.main(["run", circuit, pushes, "--backend", "reference", "--verify"]) == 3
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line.get("tick") for line in lines] == [0, 1, 1]
    assert lines[-1] == {"tick": 1, "verified": False,
                         "differences": {"big_orders": {"missing": [{"data": bob, "weight": 1}], "extra": []}}}
    assert "tick 1: the incremental outputs differ from the reference recomputation in big_orders" in err
