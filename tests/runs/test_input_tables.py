"""Deletes of rows an input table does not hold are refused (400 naming the record and
the row, nothing stored), counting what the table will hold when the push applies:
applied and pending pushes, weights, earlier records of the same push. Inputs with
`allow_negative` are plain Z-sets; keyed inputs keep their upsert rules. The input
table's contents are served paged (GET /api/runs/<id>/inputs/<input>/rows/)."""
import threading

import pytest

from circuits import services
from circuits.services import ServiceError
from runs import input_log
from runs.models import InputRow, Push, Run
from tests.conftest import example

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("api_answers_follow_the_schema")]

ADA = {"id": 1, "customer": "ada", "amount": 250}
BOB = {"id": 2, "customer": "bob", "amount": 30}


def run_of(user, document=None, name="Orders"):
    circuit = services.create_circuit(user, name, "", "private", document or example("big_orders"))
    return Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=user, status="running")


@pytest.fixture
def run(make_user):
    return run_of(make_user("alice"))


def push(api, run, records, name="orders"):
    return api.post(f"/api/runs/{run.pk}/inputs/{name}/push/", records, format="json")


def rows(api, run, name="orders", **params):
    response = api.get(f"/api/runs/{run.pk}/inputs/{name}/rows/", params)
    assert response.status_code == 200, response.content
    return response.json()


def held(api, run, name="orders"):
    return sorted((r["data"]["id"], r["weight"]) for r in rows(api, run, name, page_size=200)["results"])


def test_a_delete_of_an_absent_row_is_refused_naming_record_and_row(run, client_for):
    api = client_for(run.created_by)
    assert push(api, run, [{"insert": ADA}]).status_code == 202
    response = push(api, run, [{"insert": BOB}, {"delete": {"id": 1, "customer": "ada", "amount": 125}}])
    assert response.status_code == 400
    body = response.json()
    message = 'record 1: orders has no row {"id": 1, "customer": "ada", "amount": 125} to delete'
    assert message in body["detail"] and "Nothing was stored" in body["detail"]
    assert body["errors"] == [{"message": message, "row": 1}]
    assert Push.objects.filter(run=run).count() == 1  # nothing stored: not the insert of BOB either
    assert held(api, run) == [(1, 1)]


def test_pending_pushes_count_and_so_do_weights(run, client_for):
    api = client_for(run.created_by)
    assert push(api, run, [{"insert": ADA}]).status_code == 202  # pending: no tick applied it
    refused = push(api, run, [{"weight": -2, "data": ADA}])
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["message"] == (
        'record 0: orders holds 1 of row {"id": 1, "customer": "ada", "amount": 250}; it cannot delete 2')
    assert push(api, run, [{"weight": 2, "data": ADA}]).status_code == 202
    assert held(api, run) == [(1, 3)]
    assert push(api, run, [{"weight": -3, "data": ADA}]).status_code == 202
    assert held(api, run) == [] and not InputRow.objects.exists()
    assert push(api, run, [{"delete": ADA}]).status_code == 400


def test_a_delete_of_a_row_inserted_earlier_in_the_same_push_is_fine_later_is_not(run, client_for):
    api = client_for(run.created_by)
    assert push(api, run, [{"insert": ADA}, {"delete": ADA}, {"insert": BOB}]).status_code == 202
    assert held(api, run) == [(2, 1)]
    late = push(api, run, [{"delete": ADA}, {"insert": ADA}])
    assert late.status_code == 400 and late.json()["errors"][0]["row"] == 0


def test_csv_pushes_are_checked_too(run, client_for):
    api = client_for(run.created_by)
    response = api.generic("POST", f"/api/runs/{run.pk}/inputs/orders/push/", b"id,customer,amount,_weight\n1,ada,250,-1\n",
                           content_type="text/csv")
    assert response.status_code == 400
    assert "record 0: orders has no row" in response.json()["detail"]


def test_allow_negative_inputs_are_z_sets(make_user, client_for):
    document = example("big_orders")
    document["nodes"][0]["params"]["allow_negative"] = True
    run = run_of(make_user("zed"), document)
    api = client_for(run.created_by)
    assert push(api, run, [{"delete": ADA}]).status_code == 202
    assert held(api, run) == [(1, -1)]


KEYED = {"format": "dbspweb.circuit", "version": 1, "nodes": [
    {"id": "stock", "kind": "input", "position": {"x": 0, "y": 0}, "params": {
        "schema": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "bigint"}], "primary_key": ["sku"]}},
    {"id": "all", "kind": "output", "position": {"x": 200, "y": 0}, "params": {}}],
    "edges": [{"from": {"node": "stock", "port": "out"}, "to": {"node": "all", "port": "in"}}]}


def test_keyed_inputs_keep_upsert_and_delete_by_key(make_user, client_for):
    run = run_of(make_user("keyed"), KEYED)
    api = client_for(run.created_by)
    assert push(api, run, [{"delete": {"sku": "nothing"}}], "stock").status_code == 202  # a no-op, as before
    assert push(api, run, [{"insert": {"sku": "a", "qty": 1}}, {"insert": {"sku": "b", "qty": 2}}], "stock").status_code == 202
    assert push(api, run, [{"insert": {"sku": "a", "qty": 5}}, {"delete": {"sku": "b"}}], "stock").status_code == 202
    assert [(r["data"], r["weight"]) for r in rows(api, run, "stock")["results"]] == [({"sku": "a", "qty": 5}, 1)]


def test_rows_are_paged_and_name_the_input(run, client_for):
    api = client_for(run.created_by)
    assert push(api, run, [{"insert": {"id": i, "customer": "c", "amount": i}} for i in range(120)]).status_code == 202
    first = rows(api, run, page_size=50)
    assert first["count"] == 120 and len(first["results"]) == 50 and first["next"]
    last = rows(api, run, page_size=50, page=3)
    assert [r["data"]["id"] for r in last["results"]] == list(range(100, 120)) and last["next"] is None
    assert first["input"] == "orders" and first["through_sequence"] == 1
    assert api.get(f"/api/runs/{run.pk}/inputs/nope/rows/").status_code == 404


def test_runs_from_before_the_tables_are_caught_up_from_the_log(run, client_for):
    """A run whose log was written without the tables (Run.input_rows_through behind)."""
    Push.objects.create(run=run, sequence=1, input="orders", records=[{"data": ADA, "weight": 2}], row_count=1, applied_tick=0)
    Run.objects.filter(pk=run.pk).update(last_sequence=1, current_tick=0)
    api = client_for(run.created_by)
    assert push(api, run, [{"delete": ADA}]).status_code == 202
    assert held(api, run) == [(1, 1)]


def test_a_large_push_is_checked_and_folded_in_bulk(run, client_for, django_assert_max_num_queries):
    """10^4 rows: the number of queries grows with the push's chunks, not its rows."""
    api = client_for(run.created_by)
    many = [{"insert": {"id": i, "customer": "c", "amount": i}} for i in range(10_000)]
    assert push(api, run, many).status_code == 202
    with django_assert_max_num_queries(120):
        assert push(api, run, [{"delete": r["insert"]} for r in many[:5000]] + many[:10]).status_code == 202
    assert rows(api, run)["count"] == 5010  # 5000 deleted, 10 of them inserted again


@pytest.mark.django_db(transaction=True)
def test_concurrent_deletes_of_a_row_never_delete_more_than_it_holds(make_user):
    run = run_of(make_user("race"))
    input_log.push(run, "orders", [{"weight": 3, "data": ADA}])
    outcomes = []

    def delete_one():
        from django.db import connection

        try:
            input_log.push(Run.objects.get(pk=run.pk), "orders", [{"delete": ADA}])
            outcomes.append("accepted")
        except ServiceError as e:
            outcomes.append(e.status)
        finally:
            connection.close()

    threads = [threading.Thread(target=delete_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes, key=str) == [400] * 5 + ["accepted"] * 3
    assert not InputRow.objects.filter(run=run).exists()
    assert Push.objects.filter(run=run).count() == 4


def test_pushes_never_fold_the_log_a_quiet_run_folds_it_and_the_check_reads_both(run, client_for):
    """The check of a push's deletes reads the folded table plus the unfolded log (Arrow
    changes); folding in chunks (what a worker does for a quiet run) changes no answer."""
    from runs import input_tables

    api = client_for(run.created_by)
    assert push(api, run, [{"weight": 2, "data": ADA}, {"insert": BOB}]).status_code == 202
    assert push(api, run, [{"insert": {"id": i, "customer": "c", "amount": i}} for i in range(10, 30)]).status_code == 202
    assert not InputRow.objects.filter(run=run).exists()  # nothing folded by the pushes
    assert input_tables.fold_idle(run.pk) == 0  # pushes wait to be applied: ticks first
    Push.objects.filter(run=run).update(applied_tick=0)
    assert input_tables.fold_idle(run.pk) == 2
    run.refresh_from_db()
    assert run.input_rows_through == 2 and InputRow.objects.filter(run=run).count() == 22
    assert push(api, run, [{"delete": ADA}]).status_code == 202  # folded: ADA held twice
    refused = push(api, run, [{"weight": -2, "data": ADA}])  # folded 2 + unfolded -1 = 1
    assert refused.status_code == 400 and "holds 1 of row" in refused.json()["errors"][0]["message"]
    assert push(api, run, [{"delete": ADA}, {"delete": BOB}]).status_code == 202
    assert held(api, run) == [(i, 1) for i in range(10, 30)]


def test_the_checks_kept_keys_never_stand_for_a_push_that_was_rolled_back(run):
    """The delete check keeps each unfolded push's row keys per process (input_tables
    `_unfolded_keys`). A push whose transaction rolled back after its keys were read can
    leave its id to the next push (SQLite reuses it): its keys must not be taken for the
    new push's. Here ADA's push is read by a check (BOB's delete, refused within the same
    group of pushes) and rolled back; BOB's insert then takes its id; deleting ADA must
    still be refused and deleting BOB accepted."""
    from django.db import transaction

    class Abort(Exception):
        pass

    with pytest.raises(Abort), transaction.atomic():
        logged = input_log.log_pushes(run, [input_log.validate(run, "orders", [{"insert": ADA}]),
                                            input_log.validate(run, "orders", [{"delete": ADA}])])
        assert [isinstance(e, Push) for e in logged] == [True, True]  # the second push's check read the first
        ada_push = logged[0].pk
        raise Abort
    run.refresh_from_db()
    [bob] = input_log.log_pushes(run, [input_log.validate(run, "orders", [{"insert": BOB}])])
    assert isinstance(bob, Push)
    if bob.pk != ada_push:
        pytest.skip("this database did not reuse the rolled-back push's id")
    [refused] = input_log.log_pushes(run, [input_log.validate(run, "orders", [{"delete": ADA}])])
    assert isinstance(refused, ServiceError) and refused.status == 400, refused
    [accepted] = input_log.log_pushes(run, [input_log.validate(run, "orders", [{"delete": BOB}])])
    assert isinstance(accepted, Push), accepted
