"""Share settings (GET/PATCH /api/circuits/<id>/share/), revoking the token, share links
(GET /api/shared/<token>/) and the token on other reads (X-Share-Token, ?share=)."""
import pytest

from circuits.models import CircuitGrant
from runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user):
    return make_user("alice")


def test_owner_reads_share_settings(alice, circuit_of, client_for):
    circuit = circuit_of(alice, "unlisted")
    body = client_for(alice).get(f"/api/circuits/{circuit.pk}/share/").json()
    assert body["visibility"] == "unlisted" and body["share_token"] == circuit.share_token and len(circuit.share_token) >= 40
    assert body["share_url"] == f"http://testserver/#/shared/{circuit.share_token}"
    assert body["share_api_url"] == f"http://testserver/api/shared/{circuit.share_token}/"
    assert body["link_active"] is True and body["grants"] == []


def test_share_link_resolves_unlisted_circuits_only_until_revoked(alice, circuit_of, client_for):
    circuit = circuit_of(alice, "unlisted")
    anon = client_for()
    old = circuit.share_token
    shared = anon.get(f"/api/shared/{old}/")
    assert shared.status_code == 200 and shared.json()["id"] == circuit.pk and shared.json()["can_edit"] is False
    revoked = client_for(alice).post(f"/api/circuits/{circuit.pk}/share/revoke/")
    assert revoked.status_code == 200 and revoked.json()["share_token"] != old
    gone = anon.get(f"/api/shared/{old}/")
    assert gone.status_code == 404 and "revoked" in gone.json()["detail"]
    assert anon.get(f"/api/circuits/{circuit.pk}/", HTTP_X_SHARE_TOKEN=old).status_code == 404
    new = revoked.json()["share_token"]
    assert anon.get(f"/api/shared/{new}/").status_code == 200
    assert anon.get(f"/api/circuits/{circuit.pk}/?share={new}").status_code == 200


def test_the_token_opens_nothing_while_private(alice, circuit_of, client_for):
    circuit = circuit_of(alice, "private")
    anon = client_for()
    assert anon.get(f"/api/shared/{circuit.share_token}/").status_code == 404
    assert anon.get(f"/api/circuits/{circuit.pk}/", HTTP_X_SHARE_TOKEN=circuit.share_token).status_code == 404
    assert client_for(alice).get(f"/api/circuits/{circuit.pk}/share/").json()["link_active"] is False


def test_token_opens_the_runs_of_an_unlisted_circuit_read_only(alice, circuit_of, client_for, make_user):
    circuit = circuit_of(alice, "unlisted")
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    bob = client_for(make_user("bob"))
    assert bob.get(f"/api/runs/{run.pk}/").status_code == 404
    assert bob.get(f"/api/runs/{run.pk}/", HTTP_X_SHARE_TOKEN=circuit.share_token).status_code == 200
    assert bob.get(f"/api/runs/{run.pk}/outputs/?share={circuit.share_token}").status_code == 200
    push = bob.post(f"/api/runs/{run.pk}/inputs/orders/push/", [], format="json", HTTP_X_SHARE_TOKEN=circuit.share_token)
    assert push.status_code == 403


def test_patch_visibility_and_grants(alice, circuit_of, client_for, make_user):
    circuit = circuit_of(alice, "private")
    make_user("bob"), make_user("carol")
    api = client_for(alice)
    url = f"/api/circuits/{circuit.pk}/share/"
    response = api.patch(url, {"visibility": "public", "grants": [{"username": "bob", "can_operate": True}, {"username": "carol"}]}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["visibility"] == "public"
    assert response.json()["grants"] == [{"username": "bob", "can_operate": True, "can_edit": False},
                                         {"username": "carol", "can_operate": False, "can_edit": False}]
    # The list is replaced: carol is dropped, bob loses operate.
    response = api.patch(url, {"grants": [{"username": "bob", "can_operate": False}]}, format="json")
    assert response.json()["grants"] == [{"username": "bob", "can_operate": False, "can_edit": False}] and response.json()["visibility"] == "public"
    assert list(CircuitGrant.objects.values_list("user__username", "can_operate")) == [("bob", False)]


def test_bad_share_settings_change_nothing(alice, circuit_of, client_for, make_user):
    circuit = circuit_of(alice, "private")
    make_user("bob")
    api = client_for(alice)
    url = f"/api/circuits/{circuit.pk}/share/"
    bad = api.patch(url, {"visibility": "public", "grants": [{"username": "bob"}, {"username": "nobody"}]}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "grants" and "nobody" in bad.json()["errors"][0]["message"]
    assert api.patch(url, {"visibility": "everyone"}, format="json").status_code == 400
    owner = api.patch(url, {"grants": [{"username": "alice"}]}, format="json")
    assert owner.status_code == 400 and owner.json()["errors"][0]["field"] == "grants"
    circuit.refresh_from_db()
    assert circuit.visibility == "private" and not CircuitGrant.objects.exists()


def test_only_the_owner_sees_or_changes_share_settings(alice, circuit_of, client_for, make_user):
    public = circuit_of(alice, "public")
    private = circuit_of(alice, "private")
    bob = client_for(make_user("bob"))
    assert bob.get(f"/api/circuits/{public.pk}/share/").status_code == 403
    assert bob.patch(f"/api/circuits/{public.pk}/share/", {"visibility": "private"}, format="json").status_code == 403
    assert bob.post(f"/api/circuits/{public.pk}/share/revoke/").status_code == 403
    assert bob.get(f"/api/circuits/{private.pk}/share/").status_code == 404
    public.refresh_from_db()
    assert public.visibility == "public"


def test_grantees_see_private_circuits_and_operators_run_them(alice, circuit_of, client_for, make_user):
    circuit = circuit_of(alice, "private")
    bob, carol = make_user("bob"), make_user("carol")
    CircuitGrant.objects.create(circuit=circuit, user=bob, can_operate=True)
    CircuitGrant.objects.create(circuit=circuit, user=carol, can_operate=False)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    row = [{"insert": {"id": 1, "customer": "a", "amount": 5}}]
    bob_api, carol_api = client_for(bob), client_for(carol)
    assert bob_api.get(f"/api/circuits/{circuit.pk}/").json()["can_operate"] is True
    assert carol_api.get(f"/api/circuits/{circuit.pk}/").json()["can_operate"] is False
    assert bob_api.post(f"/api/runs/{run.pk}/inputs/orders/push/", row, format="json").status_code == 202
    assert carol_api.post(f"/api/runs/{run.pk}/inputs/orders/push/", row, format="json").status_code == 403
    # Operating is not editing.
    assert bob_api.patch(f"/api/circuits/{circuit.pk}/", {"name": "x"}, format="json").status_code == 403
    assert bob_api.get(f"/api/circuits/{circuit.pk}/share/").status_code == 403


def test_nested_errors_name_the_dotted_field(alice, circuit_of, client_for):
    circuit = circuit_of(alice, "private")
    bad = client_for(alice).patch(f"/api/circuits/{circuit.pk}/share/", {"grants": [{"username": "x"}, {"can_operate": "maybe"}]}, format="json")
    assert bad.status_code == 400
    fields = {e["field"] for e in bad.json()["errors"]}
    assert fields == {"grants.1.username", "grants.1.can_operate"}
