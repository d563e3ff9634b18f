"""Parquet in the file connectors, pumped as the lease holder pumps them: a folder of
Parquet files written by pyarrow is applied as inserts (columns matched by name, in any
order), a file whose column does not fit (type, unknown, missing) or whose value does not
fails the source naming the file, the row and the column, storing nothing; and the file
sink writes `<view>-<tick>.parquet` (the view's columns, typed, and `weight`), atomically,
the same again when a tick is written again."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def order(i):
    return {"id": i, "customer": f"c{i % 5}", "amount": (i * 37) % 300}


def test_parquet_files_are_applied_as_inserts_once_each(tmp_path, held_run, client_for):
    first = [order(i) for i in range(6)]
    pq.write_table(pa.Table.from_pylist(first), tmp_path / "001.parquet")
    # another file, its columns in another order, with a null customer
    second = pa.table({"amount": pa.array([5, 6], pa.int32()), "id": [10, 11], "customer": ["x", None]})
    pq.write_table(second, tmp_path / "002.parquet")
    source = declare(client_for, held_run, name="pq", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "parquet", "max_batch": 4})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": "002.parquet"},
               "both files")
    expected = first + [{"id": 10, "customer": "x", "amount": 5}, {"id": 11, "customer": None, "amount": 6}]
    assert pushed_rows(held_run) == [(row, 1) for row in expected]
    assert [p.row_count for p in Push.objects.filter(run=held_run).order_by("sequence")] == [4, 2, 2]
    pump.pump_run(held_run, held_run.epoch, held_run.fence)  # nothing more: each file once
    assert Connector.objects.get(pk=source.pk).records_in == 8


@pytest.mark.parametrize("table, message", [
    (pa.table({"id": [1, 2], "customer": ["a", "b"], "amount": [1.5, 2.0]}),
     "at bad.parquet, column 'amount': the file's column is double, which does not fit bigint"),
    (pa.table({"id": [1], "customer": ["a"], "amount": [1], "colour": ["red"]}),
     "at bad.parquet, column 'colour': unknown column 'colour' (columns: id, customer, amount)"),
    (pa.table({"id": [1], "amount": [1]}),
     "at bad.parquet, column 'customer': the file has no column 'customer' (the input's columns: id, customer, amount)"),
    (pa.table({"id": [1, None, 3], "customer": ["a", "b", "c"], "amount": [1, 2, 3]}),
     "at bad.parquet row 2, column 'id': null in a non-null column"),
    (pa.table({"id": pa.array([1, 2**64 - 1], pa.uint64()), "customer": ["a", "b"], "amount": [1, 2]}),
     "at bad.parquet row 2, column 'id': 18446744073709551615 is out of the bigint range"),
])
def test_a_parquet_file_that_does_not_fit_names_file_row_and_column(tmp_path, held_run, client_for, table, message):
    pq.write_table(table, tmp_path / "bad.parquet")
    source = declare(client_for, held_run, name="pq", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "parquet"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error == f"connector 'pq' (file_source) {message}"
    assert not Push.objects.filter(run=held_run).exists()


def test_a_file_that_is_not_parquet_is_named(tmp_path, held_run, client_for):
    (tmp_path / "x.parquet").write_text("id,customer,amount\n1,a,2\n")
    source = declare(client_for, held_run, name="pq", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "parquet"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    assert Connector.objects.get(pk=source.pk).last_error.startswith(
        "connector 'pq' (file_source) at x.parquet: not a Parquet file")


def test_parquet_sink_writes_a_file_per_tick_with_weights_atomically(tmp_path, held_run, client_for):
    out = tmp_path / "out"
    ticks = {0: [(order(1), 1), (order(2), 2)], 1: [], 2: [(order(1), -1)]}
    for tick, delta in ticks.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in delta]})
    sink = declare(client_for, held_run, name="pq-out", kind="file_sink", node="big_orders",
                   config={"path": str(out), "format": "parquet"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2")
    assert sorted(p.name for p in out.iterdir()) == ["big_orders-000000000000.parquet", "big_orders-000000000002.parquet"]
    for tick in (0, 2):
        table = pq.read_table(out / f"big_orders-{tick:012d}.parquet")
        assert table.schema.names == ["id", "customer", "amount", "weight"]
        assert [str(t) for t in table.schema.types] == ["int64", "string", "int64", "int64"]
        assert [({k: v for k, v in r.items() if k != "weight"}, r["weight"]) for r in table.to_pylist()] == ticks[tick]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)  # a crash before the database recorded them
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2 again")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the same files, no temporary left


def test_a_sink_format_that_is_not_known_is_refused(tmp_path, held_run, client_for):
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/", {
        "name": "x", "kind": "file_sink", "node": "big_orders", "config": {"path": str(tmp_path), "format": "avro"}},
        format="json")
    assert r.status_code == 400 and "format must be one of jsonl, parquet" in r.content.decode(), r.content
