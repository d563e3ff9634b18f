"""Delta Lake connectors against real Delta tables in a tmp folder, written and read by
the deltalake package (delta-rs), pumped as the lease holder pumps them: a source pushes
the snapshot at its start version, then each later version's changes (appends, deletes;
from the change data feed when the table has it), each once, resuming from the stored
version after a restart; a table whose column does not fit fails it naming the version
and the column; a sink appends each tick's delta in one commit, once, also when the
database forgot it had (the table's transaction version says so)."""
from collections import Counter

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Push, TickOutput
from tests.connectors.conftest import declare, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def order(i):
    return {"id": i, "customer": f"c{i % 5}", "amount": (i * 37) % 300}


def orders(ids):
    return pa.Table.from_pylist([order(i) for i in ids], pa.schema(
        [("id", pa.int64()), ("customer", pa.string()), ("amount", pa.int64())]))


def net(rows):
    """A Z-set from (row, weight) items: what the pushes add up to."""
    total = Counter()
    for row, weight in rows:
        total[tuple(sorted(row.items()))] += weight
    return {key: w for key, w in total.items() if w}


def contents(path):
    """The table's rows now, read by deltalake (the oracle: it shares no code with the source)."""
    return net((row, 1) for row in DeltaTable(path).to_pyarrow_table().to_pylist())


def test_delta_source_pushes_the_snapshot_then_each_version_once(tmp_path, held_run, client_for):
    path = str(tmp_path / "orders")
    write_deltalake(path, orders(range(5)))  # version 0
    source = declare(client_for, held_run, name="lake", kind="delta_source", node="orders",
                     config={"path": path, "max_batch": 3})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 3, "a first push")
    assert Connector.objects.get(pk=source.pk).position == {"version": 0, "snapshot": True, "record": 3}
    pump = Pump()  # a restart: resumes at record 3 of the snapshot
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"version": 0}, "the snapshot")
    assert pushed_rows(held_run) == [(order(i), 1) for i in range(5)]

    write_deltalake(path, orders([5, 6]), mode="append")  # version 1
    DeltaTable(path).delete("id = 2")  # version 2: rewrites the first file without row 2
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"version": 2}, "version 2")
    rows = pushed_rows(held_run)
    assert rows[5:7] == [(order(5), 1), (order(6), 1)]  # version 1: the appended file's rows
    # version 2 without a change data feed: the removed file's rows deleted, the new file's inserted
    assert sorted((r["id"], w) for r, w in rows[7:]) == [(0, -1), (0, 1), (1, -1), (1, 1), (2, -1), (3, -1), (3, 1),
                                                          (4, -1), (4, 1)]
    assert net(rows) == contents(path)
    assert Connector.objects.get(pk=source.pk).records_in == len(rows)
    pump.pump_run(held_run, held_run.epoch, held_run.fence)  # nothing new: nothing pushed again
    assert len(pushed_rows(held_run)) == len(rows)


def test_with_the_change_data_feed_a_delete_is_one_record(tmp_path, held_run, client_for):
    path = str(tmp_path / "cdf")
    write_deltalake(path, orders(range(4)), configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(path, orders([9]), mode="append")  # version 1
    DeltaTable(path).delete("id = 1")  # version 2
    DeltaTable(path).update(updates={"amount": "amount + 1"}, predicate="id = 3")  # version 3
    source = declare(client_for, held_run, name="lake", kind="delta_source", node="orders",
                     config={"path": path, "start_version": 1})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).position == {"version": 3}, "version 3")
    rows = pushed_rows(held_run)
    updated = {**order(3), "amount": order(3)["amount"] + 1}
    assert sorted(rows[:5], key=lambda item: item[0]["id"]) == [(order(i), 1) for i in [0, 1, 2, 3, 9]]  # the snapshot at 1
    assert rows[5] == (order(1), -1)  # version 2: the deleted row only, nothing copied
    # version 3: the update's before and after images (the feed's order within a version is not promised)
    assert sorted(rows[6:], key=lambda item: item[1]) == [(order(3), -1), (updated, 1)]
    assert net(rows) == contents(path)


@pytest.mark.parametrize("table, message", [
    (pa.table({"id": [1], "customer": ["a"], "amount": [1.5]}),
     "at version 0, column 'amount': the file's column is double, which does not fit bigint"),
    (pa.table({"id": [1], "customer": ["a"], "amount": [1], "colour": ["red"]}),
     "at version 0, column 'colour': unknown column 'colour' (columns: id, customer, amount)"),
    (pa.table({"id": pa.array([1, None], pa.int64()), "customer": ["a", "b"], "amount": [1, 2]}),
     "at version 0 row 2, column 'id': null in a non-null column"),
])
def test_a_table_that_does_not_fit_fails_the_source_naming_version_and_column(tmp_path, held_run, client_for,
                                                                              table, message):
    path = str(tmp_path / "bad")
    write_deltalake(path, table)
    source = declare(client_for, held_run, name="lake", kind="delta_source", node="orders", config={"path": path})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error == f"connector 'lake' (delta_source) {message}"
    assert not Push.objects.filter(run=held_run).exists()


def test_delta_sink_appends_each_tick_once_in_one_commit(tmp_path, held_run, client_for):
    path = str(tmp_path / "big")
    ticks = {0: [(order(1), 1), (order(2), 2)], 1: [], 2: [(order(1), -1)], 3: [(order(8), 1)]}
    for tick, delta in ticks.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in delta]})
    sink = declare(client_for, held_run, name="lake-out", kind="delta_sink", node="big_orders", config={"path": path})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3")

    def written():
        table = DeltaTable(path)
        rows = sorted(table.to_pyarrow_table().to_pylist(), key=lambda r: (r["tick"], r["id"]))
        return [(r["tick"], {k: r[k] for k in ("id", "customer", "amount")}, r["weight"]) for r in rows]

    expected = [(tick, d, w) for tick, delta in ticks.items() for d, w in sorted(delta, key=lambda x: x[0]["id"])]
    assert written() == expected
    table = DeltaTable(path)
    assert table.schema().to_arrow().names == ["id", "customer", "amount", "tick", "weight"]
    commits = [c for c in table.history() if c["operation"] == "WRITE"]
    assert sorted(int(c["dbspweb.tick"]) for c in commits) == [0, 2, 3]  # one commit per tick with rows
    # The database forgot (a crash after the commit): the table's transaction version says tick 3 is there.
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)
    TickOutput.objects.create(run=held_run, tick=4, deltas={"big_orders": [{"data": order(4), "weight": 1}]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 4, "tick 4")
    assert written() == expected + [(4, order(4), 1)]
    assert DeltaTable(path).version() == 3


def test_a_retried_tick_is_not_appended_twice(tmp_path, held_run):
    """The sink's own guard, below the pump: a new client reads the tick from the table."""
    from connectors.arrow_rows import view_schema
    from connectors.delta import DeltaSink

    path, schema = str(tmp_path / "retry"), view_schema(held_run.pk, "big_orders")
    sink = DeltaSink({"path": path}, {}, "dbspweb-run1-s", schema)
    assert sink.committed_tick == -1
    sink.write(5, [(order(1), 1)])
    again = DeltaSink({"path": path}, {}, "dbspweb-run1-s", schema)
    assert again.committed_tick == 5
    again.write(5, [(order(1), 1)])
    again.write(4, [(order(2), 1)])
    assert DeltaTable(path).to_pyarrow_table().num_rows == 1
    other = DeltaSink({"path": path}, {}, "dbspweb-run2-s", schema)  # another connector: its own ticks
    assert other.committed_tick == -1


def test_delta_sink_in_table_mode_keeps_the_views_contents_by_key(tmp_path, held_run, client_for):
    path = str(tmp_path / "contents")
    changed = {**order(1), "amount": 250}
    ticks = {0: [(order(1), 1), (order(2), 1), (order(3), 1)],
             1: [(changed, 1), (order(1), -1), (order(2), -1)],  # an update (insert listed first) and a delete
             2: [(order(4), 1), (order(3), -1)]}
    for tick, delta in ticks.items():
        TickOutput.objects.create(run=held_run, tick=tick, deltas={"big_orders": [{"data": d, "weight": w} for d, w in delta]})
    sink = declare(client_for, held_run, name="lake-table", kind="delta_sink", node="big_orders",
                   config={"path": path, "mode": "table", "key": ["id"]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2")
    view = net((d, w) for delta in ticks.values() for d, w in delta)  # the view integrated, recomputed here
    assert contents(path) == view and len(view) == 2
    table = DeltaTable(path)
    assert table.schema().to_arrow().names == ["id", "customer", "amount"]
    assert table.transaction_version(f"dbspweb-run{held_run.pk}-lake-table") == 2
    version = table.version()
    Connector.objects.filter(pk=sink.pk).update(last_tick=-1)  # the database forgot: nothing is merged again
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 2, "tick 2 again")
    assert DeltaTable(path).version() == version and contents(path) == view


def test_table_mode_needs_a_key_of_the_view(tmp_path, held_run, client_for):
    def refusal(config):
        r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/", {
            "name": "t", "kind": "delta_sink", "node": "big_orders", "config": config}, format="json")
        return r.status_code, r.content.decode()

    status, body = refusal({"path": str(tmp_path), "mode": "table"})
    assert status == 400 and "key: mode table needs the view's key columns" in body, body
    status, body = refusal({"path": str(tmp_path), "key": ["id"]})
    assert status == 400 and "key: only with mode table" in body, body


def test_a_null_key_is_matched_and_an_unknown_key_column_named(tmp_path, held_run, client_for):
    path = str(tmp_path / "nulls")
    nobody = {"id": 7, "customer": None, "amount": 120}
    TickOutput.objects.create(run=held_run, tick=0, deltas={"big_orders": [{"data": nobody, "weight": 1}]})
    TickOutput.objects.create(run=held_run, tick=1, deltas={"big_orders": [{"data": nobody, "weight": -1},
                                                                          {"data": order(8), "weight": 1}]})
    sink = declare(client_for, held_run, name="by-customer", kind="delta_sink", node="big_orders",
                   config={"path": path, "mode": "table", "key": "customer"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 1, "tick 1")
    assert contents(path) == net([(order(8), 1)])  # the row with a null key was deleted
    bad = declare(client_for, held_run, name="bad-key", kind="delta_sink", node="big_orders",
                  config={"path": path, "mode": "table", "key": ["colour"]})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=bad.pk).state == "failed", "the failure")
    assert Connector.objects.get(pk=bad.pk).last_error == (
        "connector 'bad-key' (delta_sink): key: the view has no column 'colour' (columns: id, customer, amount)")


def test_a_partitioned_table_s_rows_carry_their_partition_column(tmp_path, held_run, client_for):
    """Partition values are in the table's log, not in its data files: the rows read from
    the files of a version (without the change data feed) get them back."""
    path = str(tmp_path / "parts")
    write_deltalake(path, orders(range(6)), partition_by=["customer"])
    source = declare(client_for, held_run, name="lake", kind="delta_source", node="orders", config={"path": path})
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"version": 0}, "the snapshot")
    DeltaTable(path).delete("id = 1")  # rewrites the partition customer=c1 only (ids 1 and 6 would share it)
    write_deltalake(path, orders([11]), mode="append", partition_by=["customer"])
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"version": 2}, "version 2")
    rows = pushed_rows(held_run)
    assert all(row["customer"] == f"c{row['id'] % 5}" for row, _ in rows)
    assert rows[6:] == [(order(1), -1), (order(11), 1)]
    assert net(rows) == contents(path)
