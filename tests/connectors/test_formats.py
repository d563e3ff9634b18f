"""Source formats (connectors/formats.py): each message becomes the change records a JSON
push carries, and a message that is not one names the key or column at fault."""
import json

import pytest

from connectors.formats import FormatError, decode, decode_many, encode
from dbsp.types import Column, Schema

SCHEMA = Schema((Column("id", "bigint", nullable=False), Column("name", "string"), Column("amount", "double")))


def test_insert_delete_records_and_arrays():
    assert decode("insert_delete", b'{"insert": {"id": 1, "name": "a"}}', SCHEMA) == [{"insert": {"id": 1, "name": "a"}}]
    assert decode("insert_delete", '[{"delete": {"id": 1}}, {"insert": {"id": 2}}]', SCHEMA) == [
        {"delete": {"id": 1}}, {"insert": {"id": 2}}]


@pytest.mark.parametrize("payload, message, field", [
    (b'{"insert": {"id": 1}', "not JSON: Expecting ',' delimiter at line 1 column 21", None),
    (b'{"upsert": {"id": 1}}', "expected exactly one key, insert or delete; got ['upsert']", "upsert"),
    (b'{"insert": {"id": 1}, "delete": {"id": 1}}', "expected exactly one key, insert or delete; got ['delete', 'insert']", None),
    (b'{"insert": [1, 2]}', "insert: expected a JSON object (a row), got an array", "insert"),
    (b'"hello"', 'expected {"insert": {...}} or {"delete": {...}}, got a string', None),
    (b"\xff\xfe", "not UTF-8 text: byte 0", None),
])
def test_insert_delete_refuses_what_is_not_one(payload, message, field):
    with pytest.raises(FormatError) as e:
        decode("insert_delete", payload, SCHEMA)
    assert (str(e.value), e.value.field) == (message, field)


def test_debezium_envelope_bare_and_under_payload():
    before, after = {"id": 1, "name": "a", "amount": 1.5}, {"id": 1, "name": "b", "amount": 2.5}
    c = json.dumps({"op": "c", "before": None, "after": after})
    r = json.dumps({"schema": {"type": "struct"}, "payload": {"op": "r", "before": None, "after": after}})
    u = json.dumps({"op": "u", "before": before, "after": after, "source": {"lsn": 7}})
    d = json.dumps({"payload": {"op": "d", "before": before, "after": None}})
    assert decode("debezium", c, SCHEMA) == [{"insert": after}]
    assert decode("debezium", r, SCHEMA) == [{"insert": after}]
    assert decode("debezium", u, SCHEMA) == [{"delete": before}, {"insert": after}]
    assert decode("debezium", d, SCHEMA) == [{"delete": before}]


@pytest.mark.parametrize("payload, message, field", [
    ('{"op": "x", "after": {"id": 1}}', "op must be one of c, r, u, d; got 'x'", "op"),
    ('{"after": {"id": 1}}', "op must be one of c, r, u, d; got None", "op"),
    ('{"op": "u", "before": null, "after": {"id": 1}}', "op 'u' needs before to be a row object, got null", "before"),
    ('{"op": "d", "before": 3}', "op 'd' needs before to be a row object, got a number", "before"),
    ('[1]', "expected a Debezium envelope (an object with op, before, after), got an array", None),
])
def test_debezium_refuses_bad_envelopes(payload, message, field):
    with pytest.raises(FormatError) as e:
        decode("debezium", payload, SCHEMA)
    assert (str(e.value), e.value.field) == (message, field)


def test_plain_json_rows_insert():
    assert decode("json", b'{"id": 3}', SCHEMA) == [{"insert": {"id": 3}}]
    assert decode("json", b'[{"id": 3}, {"id": 4}]', SCHEMA) == [{"insert": {"id": 3}}, {"insert": {"id": 4}}]
    with pytest.raises(FormatError, match="expected a JSON object \\(a row\\), got a number"):
        decode("json", b"[{\"id\": 3}, 4]", SCHEMA)


def test_csv_lines_in_column_order_or_the_given_columns():
    assert decode("csv", b"7,ada,2.5\n", SCHEMA) == [{"weight": 1, "data": {"id": 7, "name": "ada", "amount": 2.5}}]
    assert decode("csv", "2.5,7", SCHEMA, ["amount", "id"]) == [{"weight": 1, "data": {"amount": 2.5, "id": 7}}]
    assert decode("csv", '8,"a,b",', SCHEMA) == [{"weight": 1, "data": {"id": 8, "name": "a,b", "amount": None}}]


@pytest.mark.parametrize("line, message, field", [
    ("x,ada,1", "expected an integer (bigint), got 'x'", "id"),
    ("1,ada", "2 fields, the header has 3", None),
    ("1,ada,1,2", "4 fields, the header has 3", None),
    ('1,a"b,1', "a quote inside an unquoted field, 'a\"b' (quote the whole field and double the quote inside: \"a\"\"b\")", "name"),
    ("", "an empty CSV line", None),
])
def test_csv_refuses_bad_lines_naming_the_column(line, message, field):
    with pytest.raises(FormatError) as e:
        decode("csv", line, SCHEMA)
    assert (str(e.value), e.value.field) == (message, field)


def test_unknown_format():
    with pytest.raises(FormatError, match="unknown format 'avro'"):
        decode("avro", b"{}", SCHEMA)


def test_sink_records_repeat_per_unit_of_weight():
    assert encode({"b": 1, "a": "x"}, 2) == [b'{"insert":{"a":"x","b":1}}'] * 2
    assert encode({"a": 1}, -1) == [b'{"delete":{"a":1}}']


# A poll's messages decoded at once (decode_many, the Kafka source's fast path) give what
# decoding them one by one gives; anything that is not plainly one record per message
# answers None, so that the caller decodes one by one and names the culprit.
PLAIN = {
    "insert_delete": [b'{"insert": {"id": 1, "name": "a", "amount": 1.5}}', '{"delete": {"id": 2, "name": null}}',
                      b'{"insert": {"id": 3, "name": "\\u00e9\\u0000x", "amount": -0.0}}', b'{"insert": {}}',
                      b' {"insert": {"id": 99999999999999999999, "extra": [1, {"a": 2}]}} ', b'{"delete": {"amount": 1e308}}'],
    "json": [b'{"id": 1, "name": "a"}', '{"id": 2, "amount": 2}', b'{}', b'{"id": 3, "name": "\\"quoted\\""}'],
    "csv": ["1,ada,2.5", b"2,,\r\n", "3,bob,-1e3\n", b"4,\xc3\xa9t\xc3\xa9,", "5,  spaced  ,0"],
}
NOT_PLAIN = {
    "insert_delete": [b'{"insert": {"id": 1}', b'{"upsert": {"id": 1}}', b'{"insert": {"id": 1}, "delete": {"id": 1}}',
                      b'{"insert": [1, 2]}', b'"hello"', b"\xff\xfe", None, b"", b'[{"insert": {"id": 7}}]',
                      b'{"insert": {"id": 1, "amount": NaN}}', b'{"data": {"id": 1}, "weight": 2}', b'{"insert": null}',
                      # two messages that are one record only together, and one that is two
                      b'{"insert": {"name": [["a"', b'"b"]]}}', b'{"insert": {}}, {"insert": {}}'],
    "json": [b'{"id": 1', b'[{"id": 1}, {"id": 2}]', b"3", b"null", None, b'{"id": Infinity}', b'"a"'],
    "csv": ["x,ada,1", "1,ada", "1,ada,1,2", '1,a"b,1', '8,"a,b",', "", "  \r\n", "1,a\nb,2", b"\xff,a,1", "1,ada,1\r2,b,2"],
}


@pytest.mark.parametrize("fmt", sorted(PLAIN))
@pytest.mark.parametrize("columns", [None, ["amount", "name", "id"]])
def test_many_messages_decoded_at_once_as_one_by_one(fmt, columns):
    payloads = PLAIN[fmt]
    if fmt == "csv" and columns:
        payloads = [",".join(reversed((p if isinstance(p, str) else p.decode()).rstrip("\r\n").split(","))) for p in payloads]
    one_by_one = [r for p in payloads for r in decode(fmt, p, SCHEMA, columns)]
    assert len(one_by_one) == len(payloads)  # one record per message: each record is its message's
    assert decode_many(fmt, payloads, SCHEMA, columns) == one_by_one
    assert decode_many(fmt, payloads[:1], SCHEMA, columns) == one_by_one[:1]


@pytest.mark.parametrize("fmt, bad", [(fmt, bad) for fmt in sorted(NOT_PLAIN) for bad in NOT_PLAIN[fmt]])
@pytest.mark.parametrize("at", [0, 2, -1])
def test_a_message_that_is_not_plainly_one_record_sends_all_one_by_one(fmt, bad, at):
    payloads = list(PLAIN[fmt])
    payloads.insert(at if at >= 0 else len(payloads), bad)
    assert decode_many(fmt, payloads, SCHEMA) is None


def test_the_debezium_format_is_always_read_one_by_one():
    assert decode_many("debezium", ['{"op": "c", "after": {"id": 1}}'], SCHEMA) is None
