"""GET /api/runs/<id>/frontier/?from=&to=: fixed points' iterations and convergence per
tick; windows' waterline, windows closed and late rows per tick."""
import pytest

from runs.models import TickOutput
from tests.runs.profiled_run import profiled_run

pytestmark = pytest.mark.django_db


def test_windows_report_waterline_closed_windows_and_late_rows(make_user, client_for):
    run = profiled_run(make_user("alice"), "sensor_windows")
    body = client_for().get(f"/api/runs/{run.pk}/frontier/").json()
    assert body["ticks"] == [0, 1, 2, 3, 4] and body["bucket"] == 1
    nodes = {n["node"]: n for n in body["nodes"]}
    assert set(nodes) == {"per_minute", "sessions"}  # no fixed point in this circuit
    T = "2026-11-21T"
    # waterline: the newest reading minus 30 s of lateness (a delete moves nothing)
    assert nodes["per_minute"]["waterline"] == [T + "10:00:10", T + "10:02:30", T + "10:02:50", T + "10:08:30", T + "10:08:30"]
    assert nodes["per_minute"]["kind"] == "tumbling_window"
    # by hand (tests/dbsp/test_profile_stats.py): the minutes 10:00 of s1 and s2 and 10:01 of s1 close
    # at tick 1, 10:03 of s2 at tick 3; the three sessions of tick 3
    assert nodes["per_minute"]["windows_closed"] == [0, 3, 0, 1, 0]
    assert nodes["sessions"]["windows_closed"] == [0, 0, 0, 3, 0]
    assert nodes["per_minute"]["late_rows"] == [0, 0, 1, 0, 1]
    part = client_for().get(f"/api/runs/{run.pk}/frontier/", {"from": 3}).json()
    assert part["ticks"] == [3, 4] and {n["node"]: n for n in part["nodes"]}["sessions"]["windows_closed"] == [3, 0]


def test_a_fixed_point_reports_its_iterations_per_tick(make_user, client_for):
    run = profiled_run(make_user("alice"), "transitive_closure")
    body = client_for().get(f"/api/runs/{run.pk}/frontier/").json()
    (tc,) = body["nodes"]
    assert tc["node"] == "tc" and tc["kind"] == "fixedpoint"
    stored = [t.frontier["tc"] for t in TickOutput.objects.filter(run=run).order_by("tick")]
    assert tc["iterations"] == [m["iteration"] for m in stored]
    assert tc["converged"] == [True] * len(stored)
    # tick 0 pushes the chain 0->1->2->3: its longest path (3 hops) is found by the 3rd
    # iteration at the earliest; later ticks add or remove one edge
    assert tc["iterations"][0] >= 3


def test_bad_range_is_refused(make_user, client_for):
    run = profiled_run(make_user("alice"), "sensor_windows")
    response = client_for().get(f"/api/runs/{run.pk}/frontier/", {"from": "x"})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "from"
