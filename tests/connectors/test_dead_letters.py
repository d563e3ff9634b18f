"""`on_error: dead_letter`: a source's records that do not parse or do not fit the input go
to its dead letters (position, column, message, the raw record), counted, while the good
records of the same batch go in; stored in the push's transaction, so a crash before the
commit stores neither and the next try stores each dead letter once. The list is bounded
(the last DBSPWEB_DEAD_LETTERS_KEPT kept, all counted) and read over REST by the run's
readers, newest first."""
import json
import uuid

import pytest
import redis

from connectors.models import Connector, DeadLetter
from connectors.pump import Pump
from runs.models import Push
from tests.connectors.conftest import declare, order, pump_until, pushed_rows

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [
    json.dumps({"insert": order(1)}),
    '{"insert": {"id": 2',  # not JSON
    json.dumps({"insert": {"id": 3, "customer": "c", "amount": 1.5}}),  # does not fit bigint
    json.dumps({"insert": {"id": 4, "colour": "red"}}),  # an unknown column
    json.dumps({"delete": order(99)}),  # deletes a row the input does not hold (refused in the push's transaction)
    json.dumps({"insert": order(5)}),
]


def letters_of(connector) -> list[tuple[str, str, str]]:
    return [(d.position, d.column, d.message) for d in DeadLetter.objects.filter(connector=connector).order_by("id")]


def test_bad_records_go_to_the_dead_letters_and_the_good_ones_go_in(tmp_path, held_run, client_for):
    (tmp_path / "orders.jsonl").write_text("\n".join(LINES) + "\n")
    source = declare(client_for, held_run, name="lenient", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "insert_delete", "on_error": "dead_letter"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": "orders.jsonl"},
               "the file applied")
    source.refresh_from_db()
    assert source.state == "running" and source.last_error == ""
    assert [r["id"] for r, w in pushed_rows(held_run)] == [1, 5]
    assert (source.records_in, source.dead_letters) == (2, 4)
    assert letters_of(source) == [
        ("orders.jsonl:2", "", "not JSON: Expecting ',' delimiter at line 1 column 20"),
        ("orders.jsonl:3", "amount", "expected an integer (bigint), got 1.5"),
        ("orders.jsonl:4", "colour", "unknown column 'colour' (columns: id, customer, amount)"),
        ("orders.jsonl:5", "", 'orders has no row {"id": 99, "customer": "c1", "amount": 63} to delete'),
    ]
    # the raw record is kept, as it was read
    assert DeadLetter.objects.get(connector=source, position="orders.jsonl:2").payload == LINES[1]

    r = client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/lenient/dead-letters/?page_size=2")
    assert r.status_code == 200
    page = r.json()
    assert page["count"] == 4 and page["next"]
    assert [d["position"] for d in page["results"]] == ["orders.jsonl:5", "orders.jsonl:4"]  # newest first
    assert page["results"][1] | {"id": 0, "created_at": ""} == {
        "id": 0, "position": "orders.jsonl:4", "column": "colour", "created_at": "",
        "message": "unknown column 'colour' (columns: id, customer, amount)", "payload": LINES[3]}
    assert client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/lenient/").json()["dead_letters"] == 4


def test_without_the_option_the_same_file_fails_the_source_naming_the_record(tmp_path, held_run, client_for):
    (tmp_path / "orders.jsonl").write_text("\n".join(LINES) + "\n")
    source = declare(client_for, held_run, name="strict", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "insert_delete"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).state == "failed", "the failure")
    source.refresh_from_db()
    assert source.last_error == ("connector 'strict' (file_source) at orders.jsonl:2: "
                                 "not JSON: Expecting ',' delimiter at line 1 column 20")
    assert not Push.objects.filter(run=held_run).exists() and not DeadLetter.objects.exists()


def test_a_csv_file_s_bad_lines_are_dead_letters(tmp_path, held_run, client_for):
    (tmp_path / "a.csv").write_text("id,customer,amount\n1,a,5\n2,b,lots\n3,c\n4,d,8\n")
    source = declare(client_for, held_run, name="csv", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "on_error": "dead_letter"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": "a.csv"}, "a.csv")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1, 4]
    source.refresh_from_db()
    assert letters_of(source) == [("a.csv:3", "amount", "expected an integer (bigint), got 'lots'"),
                                  ("a.csv:4", "", "2 fields, the header has 3")]
    assert DeadLetter.objects.get(position="a.csv:4").payload == "3,c"


def test_a_crash_before_the_commit_stores_no_dead_letter_and_the_retry_stores_each_once(tmp_path, held_run, client_for):
    (tmp_path / "orders.jsonl").write_text("\n".join(LINES) + "\n")
    source = declare(client_for, held_run, name="lenient", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "insert_delete", "on_error": "dead_letter"})
    calls = []

    def fence():  # the push's transaction (the file source has no start position to store first)
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the database went away")
        held_run.fence()

    pump = Pump()
    with pytest.raises(RuntimeError):
        pump.pump_run(held_run, held_run.epoch, fence)
    assert not DeadLetter.objects.exists() and not Push.objects.filter(run=held_run).exists()
    assert Connector.objects.get(pk=source.pk).dead_letters == 0
    pump_until(pump, held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": "orders.jsonl"}, "the file")
    for _ in range(3):  # nothing more is read again
        pump.pump_run(held_run, held_run.epoch, held_run.fence)
    assert [p for p, _, _ in letters_of(source)] == ["orders.jsonl:2", "orders.jsonl:3", "orders.jsonl:4",
                                                     "orders.jsonl:5"]
    assert Connector.objects.get(pk=source.pk).dead_letters == 4
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1, 5]


def test_the_list_keeps_the_last_n_and_counts_them_all(tmp_path, held_run, client_for, settings):
    settings.DEAD_LETTERS_KEPT = 3
    (tmp_path / "bad.jsonl").write_text("".join(f'{{"insert": {{"id": {i}, "amount": "x{i}"}}}}\n' for i in range(7)))
    source = declare(client_for, held_run, name="lenient", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "format": "insert_delete", "on_error": "dead_letter", "max_batch": 2})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": "bad.jsonl"}, "the file")
    assert Connector.objects.get(pk=source.pk).dead_letters == 7
    assert [p for p, _, _ in letters_of(source)] == ["bad.jsonl:5", "bad.jsonl:6", "bad.jsonl:7"]
    assert not Push.objects.filter(run=held_run).exists()


def test_a_redis_entry_without_its_field_is_a_dead_letter_with_its_fields(redis_server, held_run, client_for):
    r, stream = redis.Redis.from_url(redis_server.url), f"dl-{uuid.uuid4().hex[:8]}"
    r.xadd(stream, {"value": json.dumps({"insert": order(1)})})
    odd = r.xadd(stream, {"other": "x"}).decode()
    bad = r.xadd(stream, {"value": json.dumps({"insert": order(2, amount="many")})}).decode()
    last = r.xadd(stream, {"value": json.dumps({"insert": order(3)})}).decode()
    source = declare(client_for, held_run, name="entries", kind="redis_source", node="orders",
                     config={"url": redis_server.url, "stream": stream, "on_error": "dead_letter"})
    pump_until(Pump(), held_run, lambda: Connector.objects.get(pk=source.pk).position == {"after": last}, "the stream")
    assert [r["id"] for r, _ in pushed_rows(held_run)] == [1, 3]
    assert letters_of(source) == [
        (f"{stream}@{odd}", "", "the entry has no field 'value' (fields: other)"),
        (f"{stream}@{bad}", "amount", "expected an integer (bigint), got 'many'")]
    assert json.loads(DeadLetter.objects.get(position=f"{stream}@{odd}").payload) == {"other": "x"}
    assert json.loads(DeadLetter.objects.get(position=f"{stream}@{bad}").payload) == {"insert": order(2, amount="many")}


def test_the_dead_letters_are_read_by_the_run_s_readers_only(tmp_path, held_run, client_for, make_user):
    source = declare(client_for, held_run, name="lenient", kind="file_source", node="orders",
                     config={"path": str(tmp_path), "on_error": "dead_letter"})
    DeadLetter.objects.create(connector=source, position="x:1", message="m")
    url = f"/api/runs/{held_run.pk}/connectors/lenient/dead-letters/"
    assert client_for(held_run.owner).get(url).json()["count"] == 1
    assert client_for(make_user("mallory")).get(url).status_code == 404  # a private circuit's run is not there for others
    assert client_for(held_run.owner).get(f"/api/runs/{held_run.pk}/connectors/nope/dead-letters/").status_code == 404
