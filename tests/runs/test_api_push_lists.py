"""Pushes to an input with a list column (array<T>), as JSON and as CSV: lists are
stored as JSON arrays; a bad list names its row, column and element; nothing is stored."""
import pytest

from circuits import services
from runs.models import Push, Run
from tests.conftest import example

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(make_user):
    alice = make_user("alice")
    circuit = services.create_circuit(alice, "Order tags", "", "private", example("order_tags"))
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")


def url(run):
    return f"/api/runs/{run.pk}/inputs/orders/push/"


def test_a_json_push_stores_lists_as_arrays(run, client_for):
    response = client_for(run.created_by).post(url(run), [
        {"insert": {"id": 1, "customer": "ann", "tags": ["gift", None]}}, {"insert": {"id": 2, "customer": "bob", "tags": []}},
        {"insert": {"id": 3, "customer": "cy", "tags": None}},
    ], format="json")
    assert response.status_code == 202, response.json()
    assert [r["data"]["tags"] for r in Push.objects.get().records] == [["gift", None], [], None]


@pytest.mark.parametrize("tags,message", [
    ("gift", "expected a list (array<string>, a JSON array)"),
    (["gift", 7], "element 1: expected a string"),
    ([["nested"]], "element 0: expected a string"),
])
def test_a_bad_list_is_refused_naming_row_column_and_element(run, client_for, tags, message):
    response = client_for(run.created_by).post(url(run), [
        {"insert": {"id": 1, "customer": "ann", "tags": ["ok"]}}, {"insert": {"id": 2, "customer": "bob", "tags": tags}},
    ], format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["row"] == 1 and error["field"] == "tags" and message in error["message"], error
    assert Push.objects.count() == 0


def test_a_non_finite_number_inside_a_list_is_refused(make_user, client_for):
    alice = make_user("alice")
    doc = {"nodes": [{"id": "t", "kind": "input", "params": {"schema": [{"name": "xs", "type": "array<double>"}]}},
                     {"id": "v", "kind": "output", "params": {}}],
           "edges": [{"from": {"node": "t", "port": "out"}, "to": {"node": "v", "port": "in"}}]}
    circuit = services.create_circuit(alice, "Doubles", "", "private", doc)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=alice, status="running")
    # JSON has no NaN (DRF refuses it as a parse error); a CSV list cell is read by Python's JSON reader, which takes it
    text = 'xs\n"[1.5, NaN]"\n'
    response = client_for(alice).generic("POST", f"/api/runs/{run.pk}/inputs/t/push/", text.encode(), content_type="text/csv")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "xs" and error["line"] == 2 and "element 1: nan is not a finite number" in error["message"], error
    json_nan = client_for(alice).generic("POST", f"/api/runs/{run.pk}/inputs/t/push/", b'[{"insert": {"xs": [NaN]}}]',
                                         content_type="application/json")
    assert json_nan.status_code == 400
    assert Push.objects.count() == 0


def test_a_csv_push_reads_list_cells_as_json_arrays(run, client_for):
    text = 'id,customer,tags\n1,ann,"[""gift"",""urgent""]"\n2,bob,[]\n3,cy,\n'
    response = client_for(run.created_by).generic("POST", url(run), text.encode(), content_type="text/csv")
    assert response.status_code == 202, response.json()
    assert [r["data"]["tags"] for r in Push.objects.get().records] == [["gift", "urgent"], [], None]


def test_a_bad_csv_list_cell_names_its_line_and_field(run, client_for):
    text = 'id,customer,tags\n1,ann,gift\n2,bob,"[1]"\n'
    response = client_for(run.created_by).generic("POST", url(run), text.encode(), content_type="text/csv")
    assert response.status_code == 400
    found = {(e["line"], e["field"]): e["message"] for e in response.json()["errors"]}
    assert "as a JSON array such as [1, 2], got 'gift'" in found[(2, "tags")]
    assert "element 0: expected a string" in found[(3, "tags")]
    assert Push.objects.count() == 0
