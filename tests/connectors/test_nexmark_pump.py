"""The Nexmark source, pumped as the run's lease holder pumps it: three connectors with
one seed (person, auction, bid) push exactly the events the Nexmark generator gives for
that seed, each table its share, in event order, cut into pushes of at most `max_batch`
rows; a restart (a new pump, from the stored position) goes on with no duplicate and no
gap; bad options and inputs that are not Nexmark tables are refused, naming them."""
import datetime as dt

import pytest

from bench.nexmark.queries import tables_sql
from connectors.models import Connector
from connectors.nexmark_events import Config, NexmarkGenerator
from connectors.pump import Pump
from dbsp import arrow_change
from runs.models import Push, Run
from tests.connectors.conftest import declare, pump_until
from workers import leases

pytestmark = pytest.mark.django_db(transaction=True)
EVENTS = 3_000


@pytest.fixture
def nexmark_run(make_user):
    from circuits import services
    from dbsp.sql import compile_sql

    alice = make_user("nora")
    document = compile_sql(tables_sql() + "\nCREATE VIEW prices AS SELECT auction, price FROM bid;")
    circuit = services.create_circuit(alice, "nexmark", "", "private", document)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    run.epoch = leases.acquire(run.pk)
    run.fence = lambda: leases.fence(run.pk, run.epoch)
    run.owner = alice
    return run


def rows_of(run, table: str) -> list[dict]:
    out = []
    for push in Push.objects.filter(run=run, input=table).order_by("sequence"):
        change = arrow_change.from_ipc(push.change)
        records = arrow_change.records_json(change, arrow_change.input_schema(change.schema))
        assert {r["weight"] for r in records} == {1}
        out += [r["data"] for r in records]
    return out


def expected(table: str, seed: int) -> list[dict]:
    """The generator's own rows of the events [0, EVENTS), in one call, as the input log reads them back."""
    rows = NexmarkGenerator(Config(seed=seed)).events(0, EVENTS)[table].to_pylist()
    return [{k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in r.items()} for r in rows]


def test_three_sources_push_the_seeds_events_once_each_across_a_restart(nexmark_run, client_for):
    config = {"seed": 11, "rate": 1_000_000, "events": EVENTS}
    sources = [declare(client_for, nexmark_run, name=f"{t}-in", kind="nexmark_source", node=t,
                       config=dict(config, max_batch=250 if t == "bid" else 40)) for t in ("person", "auction", "bid")]

    def at(event):
        return lambda: all(Connector.objects.get(pk=s.pk).position.get("event", 0) >= event for s in sources)

    pump_until(Pump(), nexmark_run, at(EVENTS // 2), "half the events")
    pump = Pump()  # a restart: new clients, from the stored positions
    pump_until(pump, nexmark_run, at(EVENTS), "every event")
    for _ in range(3):  # drained: nothing more
        pump.pump_run(nexmark_run, nexmark_run.epoch, nexmark_run.fence)
    for source in sources:
        source.refresh_from_db()
        table = source.node
        got, want = rows_of(nexmark_run, table), expected(table, 11)
        assert source.position == {"event": EVENTS} and source.records_in == len(want)
        assert (source.lag, source.lag_unit) == (0, "events")  # none to come
        assert len(got) == len(want) and got == [{k: r[k.lower()] for k in got[0]} for r in want], table
    # the 1:3:46 mix, and the pushes cut at max_batch rows
    assert [len(rows_of(nexmark_run, t)) for t in ("person", "auction", "bid")] == [EVENTS // 50, EVENTS * 3 // 50, EVENTS * 46 // 50]
    assert max(p.row_count for p in Push.objects.filter(run=nexmark_run, input="bid")) == 250
    assert max(p.row_count for p in Push.objects.filter(run=nexmark_run, input="auction")) <= 40


def test_another_seed_gives_other_events():
    assert expected("bid", 1)[:100] != expected("bid", 2)[:100]
    assert expected("bid", 1)[:100] == expected("bid", 1)[:100]


def test_bad_options_and_inputs_that_are_not_nexmark_tables_are_refused(nexmark_run, held_run, client_for):
    cases = [(nexmark_run, "bid", {"rate": 0}, "rate: events per second"),
             (nexmark_run, "bid", {"table": "bids"}, "table: one of person, auction, bid, got 'bids'"),
             (nexmark_run, "bid", {"table": "person"}, "column 'auction' is not in Nexmark's person"),
             (nexmark_run, "bid", {"events": -1}, "events: the number of events in all"),
             (nexmark_run, "bid", {"seed": "x"}, "seed: an integer"),
             (held_run, "orders", {}, "the input's columns are not those of a Nexmark table")]
    for run, node, config, message in cases:
        r = client_for(run.owner).post(f"/api/runs/{run.pk}/connectors/",
                                       {"name": "nx", "kind": "nexmark_source", "node": node, "config": config}, format="json")
        assert r.status_code == 400 and message in str(r.json()), (config, r.content)
        assert not Connector.objects.filter(run=run).exists()
