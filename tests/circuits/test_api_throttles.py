"""Throttles (circuits/api/throttles.py): over its rate a client gets 429 with
Retry-After and the error body naming the limit; rates come from settings (env
DBSPWEB_THROTTLE_*), so the rest of the suite runs with them off (tests/conftest.py)."""
import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):
    def set_rates(**scopes):
        settings.THROTTLE_RATES = scopes

    return set_rates


def assert_throttled(response, scope):
    assert response.status_code == 429, response.status_code
    assert int(response["Retry-After"]) > 0
    body = response.json()
    assert scope in body["detail"] and body["errors"] == [{"field": "throttle", "message": body["errors"][0]["message"]}]


def test_wrong_passwords_are_throttled(rates, client_for, make_user):
    rates(login="5/min")
    make_user("alice")
    api = client_for()
    answers = [api.post("/api/auth/login/", {"username": "alice", "password": f"guess{i}"}, format="json") for i in range(5)]
    assert [a.status_code for a in answers] == [400] * 5
    assert_throttled(api.post("/api/auth/login/", {"username": "alice", "password": "s3cret-pass!"}, format="json"), "login")
    assert_throttled(api.post("/api/auth/token/", {"username": "alice", "password": "x"}, format="json"), "login")


def test_share_token_guesses_are_throttled(rates, client_for, make_user, circuit_of):
    rates(share="10/min")
    circuit = circuit_of(make_user("alice"), visibility="unlisted")
    api = client_for()
    assert [api.get(f"/api/shared/guess{i}/").status_code for i in range(8)] == [404] * 8
    assert api.get(f"/api/circuits/{circuit.pk}/", HTTP_X_SHARE_TOKEN="guess").status_code == 404
    assert api.get(f"/api/circuits/{circuit.pk}/?share={circuit.share_token}").status_code == 200
    assert_throttled(api.get(f"/api/shared/{circuit.share_token}/"), "share")
    assert api.get("/api/circuits/").status_code == 200  # requests without a token are not counted


def test_registration_is_throttled(rates, client_for):
    rates(register="2/hour")
    api = client_for()
    for name in ("reg1", "reg2"):
        assert api.post("/api/auth/register/", {"username": name, "password": "a-long-pass-phrase"}, format="json").status_code == 201
        api.post("/api/auth/logout/")
    assert_throttled(api.post("/api/auth/register/", {"username": "reg3", "password": "a-long-pass-phrase"}, format="json"), "register")


def test_anonymous_validate_and_anonymous_requests_are_throttled(rates, client_for, make_user):
    rates(validate="3/min", anon="6/min")
    anonymous, alice = client_for(), client_for(make_user("alice"))
    document = {"document": {"nodes": [], "edges": []}}
    assert [anonymous.post("/api/validate/", document, format="json").status_code for _ in range(3)] == [200] * 3
    assert_throttled(anonymous.post("/api/validate/", document, format="json"), "validate")
    assert [alice.post("/api/validate/", document, format="json").status_code for _ in range(5)] == [200] * 5
    assert [anonymous.get("/api/operators/").status_code for _ in range(2)] == [200] * 2
    assert_throttled(anonymous.get("/api/operators/"), "anon")
    assert alice.get("/api/operators/").status_code == 200  # signed-in users are not counted as anonymous


def test_off_disables_a_scope(client_for, rates):
    rates(anon="off")
    api = client_for()
    assert all(api.get("/api/operators/").status_code == 200 for _ in range(20))
