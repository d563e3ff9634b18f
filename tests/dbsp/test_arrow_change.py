"""Column-wise validation of pushed records (dbsp/arrow_change.py) against the row path
(dbsp/runtime.py changes_and_items, which names every bad record): on any records,
the column path either defers (None) or gives exactly the row path's change, in the
same order, for records the row path accepts with no value the input log refuses
(NUL characters, non-finite numbers). Stored bytes read back to the same change."""
import json
import math

from hypothesis import given, settings, strategies as st

from dbsp import arrow_change
from dbsp.errors import DataInvalid
from dbsp.runtime import changes_and_items
from dbsp.types import Column, Schema

SCHEMA = Schema((Column("id", "bigint", False), Column("name", "string"), Column("x", "double"), Column("ok", "boolean"),
                 Column("day", "date"), Column("at", "timestamp"), Column("tags", "array<string>")))
KEYED = ["id"]

values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(2**62, 2**64), st.sampled_from([0.5, -0.0, 1e308, math.inf, math.nan, 3.0]),
    st.sampled_from(["a", "b", "", "a\x00b", "2024-02-29", "2024-02-30", "0000-01-01", "2024-01-02T10:00:00", "2024-01-02T10:00:00+02:00",
                     "20240102"]),
    st.lists(st.one_of(st.none(), st.sampled_from(["a", "b\x00", "é"]), st.integers(0, 2)), max_size=2),
)
rows = st.dictionaries(st.sampled_from(SCHEMA.names + ["extra"]), values, max_size=8)
records = st.lists(st.one_of(
    st.builds(lambda r: {"insert": r}, rows),
    st.builds(lambda r: {"delete": r}, rows),
    st.builds(lambda r, w: {"weight": w, "data": r}, rows, st.one_of(st.integers(-3, 3), st.just(True), st.just(2**63))),
    st.just({"insert": None}), st.just("x"), st.just({"insert": {}, "delete": {}}),
), max_size=6)


def refused_by_the_log(recs) -> bool:
    """What runs/input_log.push_value_problems refuses besides the row path: NUL characters
    and non-finite numbers anywhere in a row's values."""
    def bad(v):
        if isinstance(v, str):
            return "\x00" in v
        if isinstance(v, float):
            return not math.isfinite(v)
        if isinstance(v, list):
            return any(bad(e) for e in v)
        return False

    return any(isinstance(r, dict) and isinstance(d, dict) and any(bad(v) for v in d.values())
               for r in recs for d in (r.get("insert"), r.get("delete"), r.get("data")) if isinstance(r, dict))


@settings(max_examples=400, deadline=None)
@given(records, st.booleans())
def test_the_column_path_defers_or_agrees_with_the_row_path(recs, keyed):
    key = KEYED if keyed else None
    table = arrow_change.from_records(recs, SCHEMA, key)
    if table is None:
        return
    assert not refused_by_the_log(recs)
    try:
        z, _ = changes_and_items(recs, SCHEMA, key)
    except DataInvalid as e:  # the column path accepted what the row path refuses
        raise AssertionError(f"row path refused {recs!r}: {e}") from None
    assert table.equals(arrow_change.from_zset(z, SCHEMA))
    # and value for value as JSON (equals() takes -0.0 for 0.0; the row path keeps one form)
    assert json.dumps(arrow_change.records_json(table, SCHEMA)) == json.dumps(
        arrow_change.records_json(arrow_change.from_zset(z, SCHEMA), SCHEMA))
    assert arrow_change.to_zset(arrow_change.from_ipc(arrow_change.to_ipc(table)), SCHEMA) == z


def test_plain_pushes_take_the_column_path_and_read_back_alone():
    recs = [{"insert": {"id": i, "name": f"n{i}", "x": i / 2, "ok": i % 2 == 0, "day": "2024-01-02",
                        "at": "2024-01-02T10:00:00.5", "tags": ["a", None]}} for i in range(50)] + [{"delete": {"id": 99}}]
    table = arrow_change.from_records(recs, SCHEMA)
    assert table is not None and table.num_rows == 51
    stored = arrow_change.from_ipc(arrow_change.to_ipc(table))
    assert arrow_change.input_schema(stored.schema) == SCHEMA
    assert arrow_change.records_json(stored, SCHEMA)[0] == {
        "data": {"id": 0, "name": "n0", "x": 0.0, "ok": True, "day": "2024-01-02", "at": "2024-01-02T10:00:00.500000",
                 "tags": ["a", None]}, "weight": 1}


def test_a_row_twice_or_a_key_twice_goes_the_row_path():
    row = {"id": 1, "name": "a"}
    assert arrow_change.from_records([{"insert": row}, {"insert": row}], SCHEMA) is None
    assert arrow_change.from_records([{"insert": row}, {"delete": {"id": 1}}], SCHEMA, KEYED) is None
    assert arrow_change.from_records([{"insert": row}, {"delete": {"id": 1}}], SCHEMA) is not None


def test_values_take_the_row_paths_one_form():
    """-0.0 is 0.0 (equal values group together), an integer in a double column a double."""
    table = arrow_change.from_records([{"insert": {"id": 1, "x": -0.0}}, {"insert": {"id": 2, "x": 3}}], SCHEMA)
    assert json.dumps([r["data"]["x"] for r in arrow_change.records_json(table, SCHEMA)]) == "[0.0, 3.0]"


def test_an_integral_double_is_a_bigint_only_while_exact():
    """1e3 is 1000, but a double past 2^53 stands for many integers: -9223372036854775809
    read by orjson is the double -2^63, which is not the number pushed (issue 30)."""
    import pytest

    from dbsp.types import coerce_value

    column = Column("id", "bigint", False)
    assert coerce_value(1e3, column) == 1000 and coerce_value(-(2.0 ** 53), column) == -(2 ** 53)
    for value in (-9.223372036854776e18, 1.8446744073709552e19, 2.0 ** 53 + 2, 1e19):
        with pytest.raises(ValueError, match="not an exact integer"):
            coerce_value(value, column)
        records = [{"insert": {"id": value}}]
        assert arrow_change.from_records(records, SCHEMA) is None  # the row path decides, and refuses
        try:
            changes_and_items(records, SCHEMA)
        except DataInvalid as e:
            assert "not an exact integer" in str(e)
        else:
            raise AssertionError(f"{value!r} was taken as a bigint")


unit_records = st.lists(st.one_of(st.builds(lambda r: {"insert": r}, rows), st.builds(lambda r: {"delete": r}, rows)),
                        max_size=8)
twice = st.lists(st.sampled_from([{"id": 1, "name": "a"}, {"id": 1, "name": None}, {"id": 2, "x": 0.5, "day": "2024-02-29"},
                                  {"id": 2, "x": -0.0, "tags": ["a", None]}, {"id": 2, "x": 0.0, "tags": ["a", None]}]),
                 max_size=8).flatmap(lambda rs: st.tuples(st.just(rs), st.lists(st.sampled_from([1, -1]), min_size=len(rs),
                                                                                max_size=len(rs))))


def _as_records(found):
    rs, ws = found
    return [{"insert": r} if w > 0 else {"delete": r} for r, w in zip(rs, ws)]


@settings(max_examples=400, deadline=None)
@given(st.one_of(unit_records, twice.map(_as_records)), st.booleans())
def test_the_consolidating_column_path_defers_or_agrees_with_the_row_path(recs, keyed):
    """Records holding a row more than once (a change stream's insert then delete of a
    row, an update of it twice): Arrow consolidates them; the change is the row path's
    Z-set, and the items (what the input log checks deletes with, record by record) are
    the row path's items."""
    key = KEYED if keyed else None
    found = arrow_change.from_records_and_items(recs, SCHEMA, key)
    if found is None:
        return
    table, items = found
    assert not refused_by_the_log(recs)
    try:
        z, row_items = changes_and_items(recs, SCHEMA, key)
    except DataInvalid as e:
        raise AssertionError(f"row path refused {recs!r}: {e}") from None
    assert arrow_change.to_zset(table, SCHEMA) == z
    assert sorted(json.dumps(r) for r in arrow_change.records_json(table, SCHEMA)) == sorted(
        json.dumps(r) for r in arrow_change.records_json(arrow_change.from_zset(z, SCHEMA), SCHEMA))
    assert table.num_rows == len(z)  # each row once, none of weight 0
    if items is None:
        assert table.equals(arrow_change.from_zset(z, SCHEMA))  # no row twice: the plain path, in record order
    else:
        assert not keyed and items == row_items


def test_a_row_inserted_and_deleted_in_one_push_is_consolidated_column_wise():
    a, b = {"id": 1, "name": "a", "day": "2024-02-29"}, {"id": 2, "name": "b"}
    recs = [{"insert": a}, {"insert": b}, {"delete": a}, {"insert": a}, {"insert": a}, {"delete": b}]
    table, items = arrow_change.from_records_and_items(recs, SCHEMA)
    assert arrow_change.records_json(table, SCHEMA) == [
        {"data": {"id": 1, "name": "a", "x": None, "ok": None, "day": "2024-02-29", "at": None, "tags": None}, "weight": 2}]
    assert items == changes_and_items(recs, SCHEMA)[1] and len(items) == 6
    assert arrow_change.from_records(recs, SCHEMA) is None  # the plain column path still defers
    assert arrow_change.from_records_and_items(recs, SCHEMA, KEYED) is None  # a key twice: the row path's last-per-key
