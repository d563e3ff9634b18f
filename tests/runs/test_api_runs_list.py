"""GET /api/runs/: the requester's runs across circuits ("My runs")."""
import pytest

from circuits.models import CircuitGrant
from runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def start(circuit_of):
    """A run of a circuit's latest version, as a worker would have left it."""
    def make(circuit, by=None, status="running", tick=0, error=""):
        return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=by or circuit.owner,
                                  status=status, current_tick=tick, error=error)

    return make


def listed(api, query=""):
    response = api.get(f"/api/runs/{query}")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_runs_of_my_circuits_newest_first_with_their_circuit(make_user, circuit_of, client_for, start):
    alice, bob = make_user("alice"), make_user("bob")
    orders = circuit_of(alice, name="Orders")
    sensors = circuit_of(alice, name="Sensors")
    first = start(orders, status="stopped", tick=4)
    second = start(sensors, status="failed", tick=1, error="Node 'big' failed: division by zero\nTraceback (most recent call last): ...")
    third = start(orders, status="running", tick=7)
    start(circuit_of(bob, "public", name="Bob's public"))  # bob's runs are not alice's, public or not
    start(circuit_of(bob, name="Bob's private"))

    body = listed(client_for(alice))
    assert body["count"] == 3
    assert [r["id"] for r in body["results"]] == [third.pk, second.pk, first.pk]
    by_id = {r["id"]: r for r in body["results"]}
    assert by_id[third.pk] | {"created_at": None, "updated_at": None} == {
        "id": third.pk, "circuit": orders.pk, "circuit_name": "Orders", "version": 1, "status": "running",
        "current_tick": 7, "error": "", "can_operate": True, "created_at": None, "updated_at": None}
    assert by_id[third.pk]["created_at"] and by_id[third.pk]["updated_at"]
    assert (by_id[second.pk]["circuit_name"], by_id[second.pk]["status"]) == ("Sensors", "failed")
    # The error in one line; the whole of it stays in the run's detail.
    assert by_id[second.pk]["error"] == "Node 'big' failed: division by zero …"
    assert "Traceback" in client_for(alice).get(f"/api/runs/{second.pk}/").json()["error"]
    # Bob sees his own two, not alice's.
    assert listed(client_for(bob))["count"] == 2


def test_a_long_error_is_cut_to_one_short_line(make_user, circuit_of, client_for, start):
    alice = make_user("alice")
    start(circuit_of(alice), status="failed", error="x" * 5000)
    error = listed(client_for(alice))["results"][0]["error"]
    assert len(error) == 160 and error.endswith("…")


def test_runs_i_started_on_a_shared_circuit_and_whether_i_may_stop_them(make_user, circuit_of, client_for, start):
    alice, bob = make_user("alice"), make_user("bob")
    private = circuit_of(bob, name="Bob's private")
    public = circuit_of(bob, "public", name="Bob's public")
    for circuit in (private, public):
        CircuitGrant.objects.create(circuit=circuit, user=alice, can_operate=True)
    on_private = start(private, by=alice)
    on_public = start(public, by=alice)
    start(private)  # bob's own run of a circuit shared with alice: his, not hers
    assert {r["id"]: r["can_operate"] for r in listed(client_for(alice))["results"]} == {on_private.pk: True, on_public.pk: True}

    # Grants withdrawn: the private circuit (and its runs) are gone from her sight; her
    # run of the public one is still hers to read, no longer to stop.
    CircuitGrant.objects.filter(user=alice).delete()
    assert {r["id"]: r["can_operate"] for r in listed(client_for(alice))["results"]} == {on_public.pk: False}
    # The owner lists all four runs of his circuits, all his to operate.
    assert {r["can_operate"] for r in listed(client_for(bob))["results"]} == {True}
    assert listed(client_for(bob))["count"] == 3


def test_filter_by_status(make_user, circuit_of, client_for, start):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    runs = {status: start(circuit, status=status) for status in ("created", "running", "paused", "stopped", "failed")}
    api = client_for(alice)
    assert [r["id"] for r in listed(api, "?status=running")["results"]] == [runs["running"].pk]
    assert {r["status"] for r in listed(api, "?status=running&status=paused")["results"]} == {"running", "paused"}
    assert {r["status"] for r in listed(api, "?status=stopped,failed")["results"]} == {"stopped", "failed"}
    assert listed(api, "?status=")["count"] == 5

    bad = api.get("/api/runs/?status=finished")
    assert bad.status_code == 400
    assert "'finished'" in bad.json()["detail"]
    assert bad.json()["errors"][0]["field"] == "status"


def test_paginated_like_the_circuits_list(make_user, circuit_of, client_for, start):
    alice = make_user("alice")
    circuit = circuit_of(alice)
    runs = [start(circuit) for _ in range(5)]
    api = client_for(alice)
    page1 = listed(api, "?page_size=2")
    assert page1["count"] == 5 and page1["previous"] is None and "page=2" in page1["next"]
    page3 = listed(api, "?page_size=2&page=3")
    assert [r["id"] for r in page3["results"]] == [runs[0].pk] and page3["next"] is None
    assert api.get("/api/runs/?page=9").status_code == 404


def test_anonymous_is_refused(client_for):
    response = client_for().get("/api/runs/")
    assert response.status_code == 403
    assert response.json()["detail"]


def test_the_query_count_does_not_grow_with_the_runs(make_user, circuit_of, client_for, start, django_assert_max_num_queries):
    alice, bob = make_user("alice"), make_user("bob")
    api = client_for(alice)
    shared = circuit_of(bob, name="shared")
    CircuitGrant.objects.create(circuit=shared, user=alice, can_operate=True)
    start(circuit_of(alice), status="failed", error="boom")
    with django_assert_max_num_queries(2) as few:  # the count, the page
        assert listed(api)["count"] == 1
    for i in range(12):
        circuit = circuit_of(alice, name=f"c{i}")
        start(circuit)
        start(circuit, status="stopped")
        start(shared, by=alice)
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert listed(api)["count"] == 37


def test_documented_in_the_api_schema(client_for):
    op = client_for().get("/api/schema/?format=json").json()["paths"]["/api/runs/"]["get"]
    status = next(p for p in op["parameters"] if p["name"] == "status")
    assert set(status["schema"]["items"]["enum"]) == {"created", "running", "paused", "stopped", "failed"}
    item = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert item["$ref"].endswith("/PaginatedRunListItemList")
