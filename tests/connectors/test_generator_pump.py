"""The generator source, pumped as the run's lease holder pumps it: rows that fit the
input's schema by the dashboard generator's rules, at the set rate, `limit` in all; the
same seed gives the same rows, and a restart (a new pump, from the stored position)
goes on with the same sequence: no duplicate, no gap."""
import time

import pytest

from connectors.models import Connector
from connectors.pump import Pump
from tests.connectors.conftest import declare, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)


def test_generator_emits_limit_rows_at_the_rate_and_resumes_the_same_sequence(held_run, client_for):
    source = declare(client_for, held_run, name="gen", kind="generator_source", node="orders",
                     config={"rate": 400, "limit": 600, "seed": 7, "max_batch": 100})
    started = time.monotonic()
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in >= 250, "250 rows")
    emitted = Connector.objects.get(pk=source.pk).position["emitted"]
    # paced: never more than the rate allows since the start (plus the first second's worth)
    assert emitted <= 400 * (time.monotonic() - started) + 400, emitted
    # A new pump (a restart) goes on from the stored position, to the limit and no further.
    pump = Pump()
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).records_in == 600, "600 rows")
    for _ in range(3):
        pump.pump_run(held_run, held_run.epoch, held_run.fence)
    source.refresh_from_db()
    assert source.records_in == 600 and source.position == {"emitted": 600}
    rows = pushed_rows(held_run)
    assert [r["id"] for r, w in rows] == list(range(1, 601)) and {w for _, w in rows} == {1}
    # the dashboard's rules: ids are serial, customers a word, amounts 1..1000
    words = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
    assert all(r["customer"] in words and 1 <= r["amount"] <= 1000 for r, _ in rows)
    assert len({r["amount"] for r, _ in rows}) > 100  # random, not one value


def test_the_same_seed_gives_the_same_rows_and_another_seed_others(held_run, client_for):
    from connectors.generator import GeneratorSource
    from circuits.services import plan_for

    schema = plan_for(held_run.version).inputs["orders"]

    def rows(seed, start, count):
        source = GeneratorSource({"rate": 1_000_000, "seed": seed}, {"emitted": start})
        out = []
        while len(out) < count:
            items, after = source.poll(count - len(out), None, schema)
            out += [r["insert"] for _, records in items for r in records]
            source.advanced(after)
        return out

    first = rows(3, 0, 50)
    assert rows(3, 0, 50) == first
    assert rows(3, 20, 30) == first[20:]  # from a stored position: the same rows on
    assert rows(4, 0, 50) != first


def test_generator_rows_fit_every_column_type():
    from connectors.generator import row
    from dbsp.types import Schema, TYPES, coerce_value

    schema = Schema.from_list([{"name": "id", "type": "bigint", "nullable": False},
                               {"name": "from_acct", "type": "bigint"}]
                              + [{"name": f"c_{t.replace('<', '_').replace('>', '')}", "type": t} for t in TYPES])
    for n in range(200):
        r = row(schema, 1, n)
        assert r["id"] == n + 1 and 1 <= r["from_acct"] <= 5
        for column in schema.columns:
            coerce_value(r[column.name], column)  # the input's own value check: raises if it does not fit
            assert r[column.name] is not None


def test_bad_generator_options_are_refused_naming_them(held_run, client_for):
    for config, message in [({"rate": 0}, "rate: rows per second"), ({"rate": "fast"}, "rate: rows per second"),
                            ({"limit": -1}, "limit: the number of rows"), ({"seed": 1.5}, "seed: an integer")]:
        r = client_for(held_run.owner).post(f"/api/runs/{held_run.pk}/connectors/",
                                            {"name": "gen", "kind": "generator_source", "node": "orders", "config": config},
                                            format="json")
        assert r.status_code == 400 and message in str(r.json()), (config, r.content)
