"""GET /metrics: the Prometheus text exposition of the live runs and their connectors,
read from the database at scrape time. Scraped over HTTP (Django's test client), parsed
by prometheus_client's own text parser, and compared with what the test stored."""
import datetime as dt

import pytest
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from connectors.models import Connector
from runs.models import Push, Run, TickOutput

pytestmark = pytest.mark.django_db
TOKEN = "scrape-me-0123456789"


def scrape(client: Client, **headers) -> dict:
    r = client.get("/metrics", **headers)
    assert r.status_code == 200, r.content
    assert r["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(r.content.decode()):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


@pytest.fixture
def runs(make_user, circuit_of):
    alice = make_user("alice")
    circuit = circuit_of(alice, "private")
    live = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="paused",
                              current_tick=2)
    done = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="stopped",
                              current_tick=5)
    for tick, ms in enumerate([10.0, 20.0, 45.0]):
        TickOutput.objects.create(run=live, tick=tick, deltas={}, ms=ms)
    TickOutput.objects.create(run=done, tick=0, deltas={}, ms=99.0)
    for sequence, rows, applied in [(1, 4, 0), (2, 3, None), (3, 5, None)]:
        Push.objects.create(run=live, sequence=sequence, input="orders", row_count=rows, applied_tick=applied)
    Connector.objects.create(run=live, name="orders-in", kind="file_source", node="orders", config={"path": "/x"},
                             records_in=12, state="running")
    Connector.objects.create(run=live, name="big-out", kind="file_sink", node="big_orders", config={"path": "/y"},
                             records_out=7, last_tick=2, state="failed", errors=3, last_error="boom",
                             error_at=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    Connector.objects.create(run=done, name="old", kind="file_sink", node="big_orders", config={"path": "/z"})
    return live, done


@override_settings(METRICS_TOKEN=TOKEN)
def test_a_scrape_holds_the_live_runs_and_their_connectors(runs):
    live, done = runs
    samples = scrape(Client(), HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    run = (("circuit", str(live.circuit_id)), ("run", str(live.pk)))

    def of(name, **extra):
        return samples[(name, tuple(sorted([*run, *extra.items()])))]

    assert of("dbspweb_run_ticks_total") == 3
    assert of("dbspweb_run_tick_seconds_total") == pytest.approx(0.075)
    assert of("dbspweb_run_last_tick_seconds") == pytest.approx(0.045)
    assert of("dbspweb_run_lag_pushes") == 2 and of("dbspweb_run_lag_rows") == 8 and of("dbspweb_run_lag_ticks") == 1
    assert [s for s in ("created", "running", "paused") if of("dbspweb_run_status", status=s) == 1] == ["paused"]
    source = {"connector": "orders-in", "kind": "file_source", "node": "orders"}
    sink = {"connector": "big-out", "kind": "file_sink", "node": "big_orders"}
    assert of("dbspweb_connector_records_in_total", **source) == 12
    assert of("dbspweb_connector_records_out_total", **sink) == 7
    assert of("dbspweb_connector_last_tick", **sink) == 2 and of("dbspweb_connector_last_tick", **source) == -1
    assert of("dbspweb_connector_errors_total", **sink) == 3
    assert of("dbspweb_connector_last_error_timestamp_seconds", **sink) == dt.datetime(
        2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC).timestamp()
    # the run is paused: its running source says paused; the failed sink stays failed
    states = {c["connector"]: [s for s in ("running", "paused", "retrying", "failed")
                               if of("dbspweb_connector_state", **c, state=s) == 1] for c in (source, sink)}
    assert states == {"orders-in": ["paused"], "big-out": ["failed"]}
    # a stopped run is not a live run: none of its samples
    assert not [k for k in samples if ("run", str(done.pk)) in k[1]]


@override_settings(METRICS_TOKEN=TOKEN)
def test_access_needs_the_token_or_a_staff_user(runs, make_user):
    anonymous = Client()
    r = anonymous.get("/metrics")
    assert r.status_code == 401 and r["WWW-Authenticate"].startswith("Bearer")
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 403
    user = Client()
    user.force_login(make_user("bob"))
    assert user.get("/metrics").status_code == 403
    staff_user = make_user("carol")
    staff_user.is_staff = True
    staff_user.save()
    staff = Client()
    staff.force_login(staff_user)
    assert any(name == "dbspweb_run_ticks_total" for name, _ in scrape(staff))


@override_settings(METRICS_TOKEN="")
def test_without_a_token_setting_no_token_opens_it(runs):
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 403
