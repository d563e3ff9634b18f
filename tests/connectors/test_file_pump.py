"""File connectors, pumped as the lease holder pumps them: a folder's files are applied
once each in name order (a file larger than a push is resumed mid-file by a new pump),
a bad line fails the source naming the file, the line and the column, and the file sink
writes one JSON Lines file per tick, atomically and idempotently."""
import json

import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def csv_file(path, ids):
    path.write_text("id,customer,amount\n" + "".join(f"{i},c{i},{i * 10}\n" for i in ids))


def test_a_folder_is_applied_once_in_name_order_and_resumed_mid_file(tmp_path, held_run, client_for):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    csv_file(inbox / "002.csv", range(10, 15))
    csv_file(inbox / "001.csv", range(0, 10))
    (inbox / ".003.csv.tmp").write_text("being written")  # hidden and temporary files are not read
    source = declare(client_for, held_run, name="drop", kind="file_source", node="orders",
                     config={"path": str(inbox), "format": "csv", "pattern": "*.csv", "max_batch": 4})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 4, "the first push")
    assert Connector.objects.get(pk=source.pk).position == {"file": "001.csv", "record": 4}
    # A new pump (a restart) resumes at record 4 of 001.csv.
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": "002.csv"}, "both files")
    csv_file(inbox / "003.csv", range(15, 17))
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 17, "the new file")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == list(range(17))  # in name order, each once
    assert Push.objects.filter(run=held_run).first().row_count == 4


def test_json_lines_file_with_a_bad_line_names_file_line_and_column(tmp_path, held_run, client_for):
    f = tmp_path / "orders.jsonl"
    f.write_text('{"insert": {"id": 1, "customer": "a", "amount": 5}}\n\n{"insert": {"id": 2, "amount": 1.5}}\n')
    source = declare(client_for, held_run, name="one", kind="file_source", node="orders",
                     config={"path": str(f), "format": "insert_delete"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error == ("connector 'one' (file_source) at orders.jsonl:3, column 'amount': "
                                 "expected an integer (bigint), got 1.5")
    assert not Push.objects.filter(run=held_run).exists()


def test_a_bad_csv_line_names_its_line(tmp_path, held_run, client_for):
    (tmp_path / "a.csv").write_text("id,customer,amount\n1,a,5\n2,b,lots\n")
    source = declare(client_for, held_run, name="csv", kind="file_source", node="orders", config={"path": str(tmp_path)})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error == ("connector 'csv' (file_source) at a.csv:3, column 'amount': "
                                 "expected an integer (bigint), got 'lots'")


def test_file_sink_writes_a_file_per_tick_atomically_and_again_the_same(tmp_path, held_run, client_for):
    out = tmp_path / "out"
    rows = {0: [({"id": 1, "customer": "a", "amount": 150}, 1)], 1: [], 2: [({"id": 1, "customer": "a", "amount": 150}, -1)]}
    for tick, delta in rows.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in delta]})
    sink = declare(client_for, held_run, name="files", kind="file_sink", node="big_orders", config={"path": str(out)})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2")
    written = {p.name: p.read_text() for p in out.iterdir()}
    assert written == {"big_orders-000000000000.jsonl": '{"insert":{"amount":150,"customer":"a","id":1}}\n',
                       "big_orders-000000000002.jsonl": '{"delete":{"amount":150,"customer":"a","id":1}}\n'}
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)  # a crash before the database recorded them
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2 again")
    assert {p.name: p.read_text() for p in out.iterdir()} == written  # the same files, no temporary left
    assert [json.loads(line) for line in written["big_orders-000000000000.jsonl"].splitlines()] == [
        {"insert": {"id": 1, "customer": "a", "amount": 150}}]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_rolling_file_sink_holds_its_ticks_once_each(held_run, client_for, tmp_path, fmt):
    """roll_ticks 3: ticks 0-2 in one file named by 0, 3-5 by 3; each record tagged with its
    tick; a tick written again (the run's database forgot it) replaces itself: the files
    hold each tick's records once, equal to the deltas the run stored."""
    import pyarrow.parquet as pq

    from runs.models import TickOutput

    deltas = {t: [({"id": t * 10 + i, "customer": f"c{i}", "amount": 100 + t}, 1 if (t + i) % 3 else -1) for i in range(t % 3 + 1)]
              for t in range(7) if t != 4}  # tick 4 did not change the view
    for tick, rows in deltas.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in rows]})
    sink = declare(client_for, held_run, name="rolled", kind="file_sink", node="big_orders",
                   config={"path": str(tmp_path), "format": fmt, "roll_ticks": 3})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 6, "tick 6")
    Connector.objects.filter(pk=sink.pk).update(last_tick=4)  # forgotten: tick 5 and 6 are written again
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 6, "tick 6 again")
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"big_orders-{t:012d}.{fmt}" for t in (0, 3, 6)]

    def records(path):
        if fmt == "parquet":
            return [(r["tick"], r["id"], r["customer"], r["amount"], r["weight"]) for r in pq.read_table(path).to_pylist()]
        out = []
        for line in path.read_text().splitlines():
            record = json.loads(line)
            (key, row), = [(k, v) for k, v in record.items() if k != "tick"]
            out.append((record["tick"], row["id"], row["customer"], row["amount"], 1 if key == "insert" else -1))
        return out

    held = [r for p in sorted(tmp_path.iterdir()) for r in records(p)]
    expected = [(t, d["id"], d["customer"], d["amount"], w) for t, rows in deltas.items() for d, w in rows]
    assert sorted(held) == sorted(expected) and len(held) == len(expected)
