"""POST .../threads/<thread>/resolve/ and .../reopen/: a writer or the thread's author;
who and when are kept."""
import pytest

from tests.circuits.comment_steps import counts, share, start, threads_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_user):
    return {n: make_user(n) for n in ("alice", "bob", "carol", "dave")}


@pytest.fixture
def circuit(people, circuit_of):
    c = circuit_of(people["alice"])
    share(c, people["bob"])  # viewer
    share(c, people["dave"])  # viewer
    share(c, people["carol"], can_edit=True)  # writer
    return c


def test_a_writer_resolves_and_reopens_and_who_and_when_are_kept(people, circuit, client_for):
    thread = start(client_for(people["bob"]), circuit)
    carol = client_for(people["carol"])
    resolved = carol.post(f"{threads_url(circuit)}{thread['id']}/resolve/").json()
    assert (resolved["resolved"], resolved["resolved_by"]) == (True, "carol") and resolved["resolved_at"]
    again = carol.post(f"{threads_url(circuit)}{thread['id']}/resolve/").json()
    assert again["resolved_at"] == resolved["resolved_at"]  # resolving twice changes nothing
    reopened = client_for(people["alice"]).post(f"{threads_url(circuit)}{thread['id']}/reopen/").json()
    assert (reopened["resolved"], reopened["resolved_by"], reopened["reopened_by"]) == (False, None, "alice")
    assert reopened["reopened_at"]


def test_the_threads_author_resolves_even_as_a_viewer_but_another_viewer_does_not(people, circuit, client_for):
    thread = start(client_for(people["bob"]), circuit)
    before = counts()
    refused = client_for(people["dave"]).post(f"{threads_url(circuit)}{thread['id']}/resolve/")
    assert refused.status_code == 403 and "author" in refused.json()["detail"]
    assert counts() == before
    assert client_for(people["bob"]).post(f"{threads_url(circuit)}{thread['id']}/resolve/").json()["resolved_by"] == "bob"


def test_a_reply_to_a_resolved_thread_leaves_it_resolved(people, circuit, client_for):
    alice = client_for(people["alice"])
    thread = start(alice, circuit)
    alice.post(f"{threads_url(circuit)}{thread['id']}/resolve/")
    replied = client_for(people["bob"]).post(f"{threads_url(circuit)}{thread['id']}/comments/", {"body": "late"}, format="json")
    assert replied.status_code == 201 and replied.json()["resolved"] is True


def test_an_author_who_lost_access_cannot_resolve(people, circuit, client_for):
    thread = start(client_for(people["bob"]), circuit)
    circuit.grants.filter(user=people["bob"]).delete()
    assert client_for(people["bob"]).post(f"{threads_url(circuit)}{thread['id']}/resolve/").status_code == 404
