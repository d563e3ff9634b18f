"""POST /api/runs/<id>/connectors/<name>/pause/ and .../start/: one connector paused while
the run's others go on (a paused source reads nothing, a paused sink writes nothing, its
client closed), `paused` in its status, and started again it catches up: a source from
its stored position, a sink from its last tick (nothing lost)."""
import pytest

from connectors.models import Connector
from connectors.pump import Pump
from runs.models import Run, TickOutput
from tests.connectors.conftest import declare, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def csv_file(path, ids):
    path.write_text("id,customer,amount\n" + "".join(f"{i},c{i},{i * 10}\n" for i in ids))


def tick(run, n):
    TickOutput.objects.create(run=run, tick=n, deltas={"big_orders": [
        {"data": {"id": n, "customer": "a", "amount": 150 + n}, "weight": 1}]})
    Run.objects.filter(pk=run.pk).update(current_tick=n)


def test_a_paused_sink_writes_nothing_while_the_source_goes_on_then_catches_up(tmp_path, held_run, client_for):
    inbox, out = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    source = declare(client_for, held_run, name="drop", kind="file_source", node="orders", config={"path": str(inbox)})
    sink = declare(client_for, held_run, name="files", kind="file_sink", node="big_orders", config={"path": str(out)})
    api, pump = client_for(held_run.owner), Pump()
    tick(held_run, 0)
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 0, "tick 0 written")
    assert sink.pk in pump.live

    r = api.post(f"/api/runs/{held_run.pk}/connectors/files/pause/")
    assert r.status_code == 200 and r.json()["state"] == "paused"
    for n in (1, 2, 3):
        tick(held_run, n)
    csv_file(inbox / "001.csv", range(5))
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 5, "the source's file")
    for _ in range(3):
        pump.pump_run(held_run, held_run.epoch, held_run.fence)
    assert Connector.objects.get(pk=sink.pk).last_tick == 0 and sink.pk not in pump.live  # its client let go
    assert sorted(p.name for p in out.iterdir()) == ["big_orders-000000000000.jsonl"]
    status = api.get(f"/api/runs/{held_run.pk}/connectors/files/").json()
    assert (status["state"], status["lag"], status["lag_unit"]) == ("paused", 3, "ticks")  # 3 ticks behind

    r = api.post(f"/api/runs/{held_run.pk}/connectors/files/start/")
    assert r.status_code == 200 and r.json()["state"] == "running"
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=sink.pk).last_tick == 3, "tick 3 written")
    assert sorted(p.name for p in out.iterdir()) == [f"big_orders-{n:012d}.jsonl" for n in range(4)]
    assert api.get(f"/api/runs/{held_run.pk}/connectors/files/").json()["lag"] == 0


def test_a_paused_source_reads_nothing_and_resumes_at_its_position(tmp_path, held_run, client_for):
    csv_file(tmp_path / "001.csv", range(3))
    source = declare(client_for, held_run, name="drop", kind="file_source", node="orders", config={"path": str(tmp_path)})
    api, pump = client_for(held_run.owner), Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 3, "001.csv")
    assert api.post(f"/api/runs/{held_run.pk}/connectors/drop/pause/").json()["state"] == "paused"
    csv_file(tmp_path / "002.csv", range(3, 6))
    for _ in range(5):
        pump.pump_run(held_run, held_run.epoch, held_run.fence)
    assert Connector.objects.get(pk=source.pk).records_in == 3
    assert api.post(f"/api/runs/{held_run.pk}/connectors/drop/start/").json()["state"] == "running"
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 6, "002.csv")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == list(range(6))  # each once, in order


def test_a_failed_connector_is_restarted_not_paused(tmp_path, held_run, client_for):
    (tmp_path / "a.csv").write_text("id,customer,amount\n1,a,lots\n")
    source = declare(client_for, held_run, name="csv", kind="file_source", node="orders", config={"path": str(tmp_path)})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/csv/pause/")
    assert r.status_code == 409
    assert r.json()["detail"] == ("connector 'csv' (file_source) failed; restart it (POST .../restart/) rather than "
                                  "pause it.")
    assert Connector.objects.get(pk=source.pk).state == "failed"


def test_only_operators_pause_and_start(held_run, client_for, make_user, tmp_path):
    declare(client_for, held_run, name="drop", kind="file_source", node="orders", config={"path": str(tmp_path)})
    stranger = client_for(make_user("mallory"))
    for action in ("pause", "start"):
        assert stranger.post(f"/api/runs/{held_run.pk}/connectors/drop/{action}/").status_code == 404
    assert client_for(None).post(f"/api/runs/{held_run.pk}/connectors/drop/pause/").status_code in (401, 403, 404)
    assert Connector.objects.get(name="drop").state == "running"
