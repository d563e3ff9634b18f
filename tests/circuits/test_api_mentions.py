"""@mentions: resolved to users who can read the circuit (else 400 naming the name, nothing
stored), listed at GET /api/mentions/ (unread/read), marked read at POST /api/mentions/read/."""
import pytest

from circuits.comments.mentions import names_in
from tests.circuits.comment_steps import counts, share, start, threads_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_user):
    return {n: make_user(n) for n in ("alice", "bob", "carol", "eve")}


@pytest.fixture
def circuit(people, circuit_of):
    c = circuit_of(people["alice"])
    share(c, people["bob"])
    share(c, people["carol"], can_edit=True)
    return c


def test_names_in_a_body():
    assert names_in("@bob look, and @carol. mail ada@example.com or @bob again; @x.y_z-1+") == ["bob", "carol", "x.y_z-1+"]
    assert names_in("no mention @ here") == []


def test_a_mention_of_an_unknown_user_or_one_without_access_is_refused_naming_them(people, circuit, client_for):
    alice = client_for(people["alice"])
    before = counts()
    response = alice.post(threads_url(circuit), {"node": "big", "body": "@bob and @nobody and @eve"}, format="json")
    assert response.status_code == 400
    answer = response.json()
    assert "@nobody" in answer["detail"] and "@eve" in answer["detail"] and "@bob" not in answer["detail"]
    assert [e["mention"] for e in answer["errors"]] == ["nobody", "eve"]
    assert counts() == before
    circuit.visibility = "public"  # now eve can read it: she may be mentioned
    circuit.save()
    assert start(alice, circuit, "big", "@eve look")["comments"][0]["mentions"] == ["eve"]


def test_my_mentions_unread_then_read(people, circuit, client_for):
    alice, bob = client_for(people["alice"]), client_for(people["bob"])
    thread = start(alice, circuit, "big", "@bob why 100?")
    start(alice, circuit, "orders", "@carol and @alice (myself: not a mention)")
    mine = bob.get("/api/mentions/", {"state": "unread"}).json()
    assert mine["unread"] == 1
    [m] = mine["results"]
    assert (m["circuit"], m["circuit_name"], m["thread"], m["node"], m["author"], m["body"], m["read"]) == (
        circuit.pk, "Big orders", thread["id"], "big", "alice", "@bob why 100?", False)
    assert client_for(people["alice"]).get("/api/mentions/").json() == {"unread": 0, "results": []}
    after = bob.post("/api/mentions/read/", {"ids": [m["id"]]}, format="json").json()
    assert after["unread"] == 0 and after["results"][0]["read"] is True
    assert bob.get("/api/mentions/", {"state": "unread"}).json()["results"] == []
    assert [x["id"] for x in bob.get("/api/mentions/", {"state": "read"}).json()["results"]] == [m["id"]]


def test_marking_someone_elses_mention_read_is_refused_naming_it(people, circuit, client_for):
    start(client_for(people["alice"]), circuit, "big", "@bob")
    bobs = client_for(people["bob"]).get("/api/mentions/").json()["results"][0]["id"]
    response = client_for(people["carol"]).post("/api/mentions/read/", {"ids": [bobs]}, format="json")
    assert response.status_code == 400 and str(bobs) in response.json()["detail"]
    assert client_for(people["bob"]).get("/api/mentions/").json()["unread"] == 1
    for body in ({}, {"ids": "1"}, {"ids": [0]}, {"ids": [2**63]}, {"ids": [10**30]}, {"all": "maybe"}, []):
        assert client_for(people["bob"]).post("/api/mentions/read/", body, format="json").status_code == 400, body


def test_mentions_on_a_circuit_i_can_no_longer_read_are_not_listed(people, circuit, client_for):
    start(client_for(people["alice"]), circuit, "big", "@bob")
    circuit.grants.filter(user=people["bob"]).delete()
    assert client_for(people["bob"]).get("/api/mentions/").json() == {"unread": 0, "results": []}


def test_all_read_and_a_bad_state(people, circuit, client_for):
    alice = client_for(people["alice"])
    start(alice, circuit, "big", "@bob one")
    start(alice, circuit, "orders", "@bob two")
    bob = client_for(people["bob"])
    assert bob.post("/api/mentions/read/", {"all": True}, format="json").json()["unread"] == 0
    bad = bob.get("/api/mentions/", {"state": "new"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "state"
    assert client_for().get("/api/mentions/").status_code == 403
