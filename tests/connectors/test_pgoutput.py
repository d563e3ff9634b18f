"""The pgoutput decoder and PostgreSQL text values, on messages built by hand from the
protocol's documented layout (the pump tests read the real server's), and the value
conversion of each column type with its refusals."""
import struct

import pytest

from connectors import pgoutput
from connectors.postgres import from_text


def tuple_data(*values) -> bytes:
    out = struct.pack(">h", len(values))
    for v in values:
        if v is None:
            out += b"n"
        elif v is pgoutput.UNCHANGED:
            out += b"u"
        else:
            data = v.encode()
            out += b"t" + struct.pack(">i", len(data)) + data
    return out


def test_messages_of_a_transaction():
    relation = (b"R" + struct.pack(">I", 16385) + b"shop\0orders\0" + b"f" + struct.pack(">h", 2)
                + b"\x01id\0" + struct.pack(">Ii", 20, -1) + b"\x00name\0" + struct.pack(">Ii", 25, -1))
    assert pgoutput.decode(relation) == pgoutput.Relation(16385, "shop", "orders", "f", [("id", 20), ("name", 25)])
    assert pgoutput.decode(b"B" + struct.pack(">qqI", 0x1_0000_0010, 0, 7)) == pgoutput.Begin(0x1_0000_0010, 7)
    insert = pgoutput.decode(b"I" + struct.pack(">I", 16385) + b"N" + tuple_data("1", None))
    assert (insert.op, insert.new) == ("I", ["1", None])
    update = pgoutput.decode(b"U" + struct.pack(">I", 16385) + b"O" + tuple_data("1", "é") + b"N"
                             + tuple_data("2", pgoutput.UNCHANGED))
    assert (update.op, update.old, update.new, update.old_is_key) == ("U", ["1", "é"], ["2", pgoutput.UNCHANGED], False)
    delete = pgoutput.decode(b"D" + struct.pack(">I", 16385) + b"K" + tuple_data("2", None))
    assert (delete.op, delete.old, delete.old_is_key) == ("D", ["2", None], True)
    commit = pgoutput.decode(b"C" + struct.pack(">bqqq", 0, 0x1_0000_0010, 0x1_0000_0040, 0))
    assert commit == pgoutput.Commit(0x1_0000_0010, 0x1_0000_0040)
    assert pgoutput.lsn_text(commit.end_lsn) == "1/40" and pgoutput.lsn_int("1/40") == commit.end_lsn
    assert pgoutput.decode(b"T" + struct.pack(">ibI", 1, 0, 16385)) == pgoutput.Truncate([16385])


@pytest.mark.parametrize("data, message", [
    (b"", "an empty message"),
    (b"I" + struct.pack(">I", 1) + b"N" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 9) + b"abc",
     "value cut short at byte 13"),
    (b"C\x00\x00", "message cut short at byte 1"),
    (b"Z", "unknown message kind b'Z'"),
    (b"D" + struct.pack(">I", 1) + b"N", "delete without its old tuple (got b'N')"),
])
def test_broken_messages_are_named(data, message):
    with pytest.raises(pgoutput.DecodeError) as caught:
        pgoutput.decode(data)
    assert str(caught.value) == message


@pytest.mark.parametrize("text, type_, value", [
    ("42", "bigint", 42), ("-9223372036854775808", "bigint", -2**63), ("12.000", "bigint", 12),
    ("1.5", "double", 1.5), ("1e-7", "double", 1e-7), ("t", "boolean", True), ("false", "boolean", False),
    ("2026-02-28", "date", "2026-02-28"), ("2026-02-28 13:45:01.25", "timestamp", "2026-02-28T13:45:01.250000"),
    ("2026-02-28 13:45:01+02", "timestamp", "2026-02-28T11:45:01"), ("", "string", ""), (None, "bigint", None),
])
def test_values_from_postgres_text(text, type_, value):
    assert from_text(text, type_) == value


@pytest.mark.parametrize("text, type_, message", [
    ("1.5", "bigint", "expected an integer (bigint), got '1.5'"),
    ("NaN", "bigint", "expected an integer (bigint), got 'NaN'"),
    ("Infinity", "double", "Infinity is not a finite number"),
    ("yes", "boolean", "expected true or false, got 'yes'"),
    ("infinity", "date", "expected a date 'YYYY-MM-DD', got 'infinity'"),
    ("2026-13-01 00:00:00", "timestamp", "expected a timestamp, got '2026-13-01 00:00:00'"),
])
def test_values_that_do_not_fit_say_why(text, type_, message):
    with pytest.raises(ValueError) as caught:
        from_text(text, type_)
    assert str(caught.value) == message
