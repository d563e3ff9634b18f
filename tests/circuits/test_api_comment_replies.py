"""POST .../threads/<thread>/comments/ (reply) and PATCH/DELETE .../comments/<comment>/:
anyone the circuit is shared with replies; only a comment's author edits or deletes it."""
import pytest

from circuits.models import CommentThread, Mention
from tests.circuits.comment_steps import counts, share, start, threads_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(make_user):
    return {n: make_user(n) for n in ("alice", "bob", "carol")}


@pytest.fixture
def circuit(people, circuit_of):
    c = circuit_of(people["alice"])
    share(c, people["bob"])
    share(c, people["carol"], can_edit=True)
    return c


def replies(circuit, thread):
    return f"{threads_url(circuit)}{thread['id']}/comments/"


def test_a_reply_joins_the_thread_in_order(people, circuit, client_for):
    thread = start(client_for(people["alice"]), circuit)
    answer = client_for(people["bob"]).post(replies(circuit, thread), {"body": "  Because @alice said so.  "}, format="json")
    assert answer.status_code == 201
    comments = answer.json()["comments"]
    assert [(c["author"], c["body"], c["mentions"]) for c in comments] == [
        ("alice", "Why 100?", []), ("bob", "Because @alice said so.", ["alice"])]


def test_the_author_edits_their_comment_and_its_mentions_follow(people, circuit, client_for):
    alice = client_for(people["alice"])
    thread = start(alice, circuit, "big", "ask @bob")
    comment = thread["comments"][0]["id"]
    url = f"{replies(circuit, thread)}{comment}/"
    edited = alice.patch(url, {"body": "ask @carol instead"}, format="json")
    assert edited.status_code == 200
    shown = edited.json()["comments"][0]
    assert (shown["body"], shown["mentions"]) == ("ask @carol instead", ["carol"]) and shown["edited_at"]
    assert sorted(Mention.objects.values_list("user__username", flat=True)) == ["carol"]


def test_someone_else_cannot_edit_or_delete_a_comment(people, circuit, client_for):
    thread = start(client_for(people["alice"]), circuit)
    url = f"{replies(circuit, thread)}{thread['comments'][0]['id']}/"
    before = counts()
    for who in ("bob", "carol"):  # a viewer and a writer: neither is the author
        assert client_for(people[who]).patch(url, {"body": "mine now"}, format="json").status_code == 403
        assert client_for(people[who]).delete(url).status_code == 403
    assert counts() == before


def test_deleting_a_reply_keeps_the_thread_and_deleting_the_last_comment_deletes_it(people, circuit, client_for):
    alice, bob = client_for(people["alice"]), client_for(people["bob"])
    thread = start(alice, circuit)
    reply = bob.post(replies(circuit, thread), {"body": "me too"}, format="json").json()["comments"][1]["id"]
    assert bob.delete(f"{replies(circuit, thread)}{reply}/").status_code == 204
    assert [c["body"] for c in alice.get(f"{threads_url(circuit)}{thread['id']}/").json()["comments"]] == ["Why 100?"]
    assert alice.delete(f"{replies(circuit, thread)}{thread['comments'][0]['id']}/").status_code == 204
    assert not CommentThread.objects.exists()


def test_a_comment_of_another_thread_is_not_found(people, circuit, client_for):
    alice = client_for(people["alice"])
    one, two = start(alice, circuit, "big", "one"), start(alice, circuit, "orders", "two")
    response = alice.patch(f"{replies(circuit, one)}{two['comments'][0]['id']}/", {"body": "x"}, format="json")
    assert response.status_code == 404 and response.json()["errors"][0]["field"] == "comment"


@pytest.mark.parametrize("body, field", [
    ("{", None), ("[]", None), ('{"body": ""}', "body"), ('{"body": 12}', "body"), ('{"body": true}', "body"),
    ('{"body": "' + "y" * 5001 + '"}', "body"), ("{}", "body"),
])
def test_hostile_replies_and_edits_change_nothing(people, circuit, client_for, body, field):
    alice = client_for(people["alice"])
    thread = start(alice, circuit)
    before = counts()
    for method, url in (("POST", replies(circuit, thread)), ("PATCH", f"{replies(circuit, thread)}{thread['comments'][0]['id']}/")):
        response = alice.generic(method, url, body.encode(), content_type="application/json")
        assert response.status_code == 400, (method, response.content)
        if field:
            assert field in {e.get("field") for e in response.json()["errors"]}
    assert counts() == before


def test_anonymous_cannot_reply_even_with_the_share_link(people, circuit, client_for):
    circuit.visibility = "unlisted"
    circuit.save()
    thread = start(client_for(people["alice"]), circuit)
    anon = client_for()
    anon.credentials(HTTP_X_SHARE_TOKEN=circuit.share_token)
    assert anon.get(threads_url(circuit)).status_code == 200
    assert anon.post(replies(circuit, thread), {"body": "hi"}, format="json").status_code == 403


def test_a_reply_to_a_thread_deleted_meanwhile_is_not_found_and_stores_nothing(people, circuit, client_for):
    """The thread was looked up, then its last comment deleted before the reply is written."""
    from circuits.comments import handler
    from circuits.services import ServiceError

    thread = CommentThread.objects.get(pk=start(client_for(people["alice"]), circuit)["id"])
    CommentThread.objects.filter(pk=thread.pk).delete()
    with pytest.raises(ServiceError) as refused:
        handler.reply(thread, people["bob"], "too late")
    assert refused.value.status == 404 and counts()[:3] == (0, 0, 0)
