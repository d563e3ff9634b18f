"""The pgoutput decoder and PostgreSQL text values, on messages built by hand from the
protocol's documented layout (the pump tests read the real server's), and the value
conversion of each column type with its refusals."""
import struct

import pytest

from connectors import pgoutput
from connectors.postgres import converter, from_text


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


def _changes(rng) -> list[bytes]:
    """Insert, update and delete messages with every kind of value: text (empty, non-ASCII),
    NULL, unchanged TOAST, and (in a few) a kind byte no protocol version has."""
    def value():
        return rng.choice([None, pgoutput.UNCHANGED, "", "42", "-7", "r07", "é✓", "x" * rng.randrange(300)])

    out = []
    for i in range(300):
        values = [value() for _ in range(rng.randrange(6))]
        body = tuple_data(*values)
        if i % 50 == 49:  # an unknown value kind in the middle
            body = body[:2] + b"q" + body[3:] if len(body) > 2 else body
        relid = struct.pack(">I", 16385 + i % 3)
        out.append(rng.choice([b"I" + relid + b"N" + body, b"D" + relid + rng.choice([b"K", b"O"]) + body,
                               b"U" + relid + b"O" + body + b"N" + tuple_data(*reversed(values)),
                               b"U" + relid + b"N" + body]))
    return out


def _outcome(decode, data):
    try:
        return decode(data)
    except pgoutput.DecodeError as e:
        return f"DecodeError: {e}"


def test_the_tuple_reader_decodes_as_the_reference_does_and_names_the_same_byte():
    """The product's tuple reader (values read in place) against the reader it replaced
    (tests/connectors/pgoutput_reference.py, one struct per field) on the same messages and
    on every cut of them: the same values, or the same error naming the same byte."""
    import random

    from tests.connectors import pgoutput_reference

    compared = errors = 0
    for message in _changes(random.Random(27)):
        for cut in range(1, len(message) + 1):
            data = message[:cut]
            expected = _outcome(pgoutput_reference.decode, data)
            assert _outcome(pgoutput.decode, data) == expected, (message, cut)
            compared += 1
            errors += isinstance(expected, str)
    assert errors > 10_000 and compared - errors > 250  # both outcomes were compared, many times


@pytest.mark.parametrize("text", [
    "0", "42", "-9223372036854775808", "9223372036854775807", "007", "-0", "12.000", "1.5", "-", "", "+3", " 4", "1_000",
    "²", "١٢", "NaN", "many", None])
@pytest.mark.parametrize("type_", ["bigint", "string", "double", "boolean", "date", "timestamp"])
def test_a_columns_converter_gives_what_from_text_gives(text, type_):
    """The per-column converters the source reads millions of values with take shortcuts
    for the common forms: on any text they give from_text's value, or its refusal."""
    def outcome(convert):
        try:
            value = convert(text)
            return type(value), value
        except ValueError as e:
            return "ValueError", str(e)

    assert outcome(converter(type_)) == outcome(lambda t: from_text(t, type_))


def test_a_bad_value_in_a_row_is_named_by_its_position_and_column():
    from connectors.errors import RecordError
    from connectors.postgres import PostgresSource

    source = PostgresSource.__new__(PostgresSource)  # only the row conversion: no server
    source.columns = [("id", "id", "bigint"), ("customer", "customer", "string"), ("amount", "amount", "bigint")]
    source.converters = [(name, converter(type_)) for name, _, type_ in source.columns]
    assert source._row(["7", "c1", "-3"], "shop.orders snapshot row 7") == {"id": 7, "customer": "c1", "amount": -3}
    with pytest.raises(RecordError) as caught:
        source._row(["8", "c2", "3.5"], "shop.orders snapshot row 8")
    assert str(caught.value.named("connector 'o' (postgres_source)")) == (
        "connector 'o' (postgres_source) at shop.orders snapshot row 8, column 'amount': "
        "expected an integer (bigint), got '3.5'")
