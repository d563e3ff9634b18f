"""Shared steps of the comment API tests (tests/circuits/test_api_comment_*.py)."""
from circuits.models import CircuitGrant, Comment, CommentThread, Mention


def share(circuit, user, can_edit=False):
    CircuitGrant.objects.create(circuit=circuit, user=user, can_edit=can_edit)


def threads_url(circuit):
    return f"/api/circuits/{circuit.pk}/threads/"


def start(client, circuit, node="big", body="Why 100?"):
    response = client.post(threads_url(circuit), {"node": node, "body": body}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def counts():
    """What a refused request must leave unchanged."""
    return (CommentThread.objects.count(), Comment.objects.count(), Mention.objects.count(),
            list(Comment.objects.values_list("body", "edited_at")), list(CommentThread.objects.values_list("resolved_at", flat=True)))
