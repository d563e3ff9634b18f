"""The numeric rule (dbsp.numeric) on every path: literals out of range are refused at
validation with their position; a computed double that is not finite or a bigint beyond
64 bits fails the tick with an error naming the node and its operator; conversions that
do not fit give NULL; strings longer than MAX_STRING_CHARS fail the tick naming the node.
Before: `d + 1e400`, two rows of 1.7e308 summed, `inf - inf` and a 5000-digit literal made
ticks whose commit failed for ever (JSON holds no infinity), and `round(d, 28)`,
`n + 2^70`, `CAST('9' x 5000 AS BIGINT)` failed with a bare Python error."""
import pytest

from dbsp import compile_plan, limits
from dbsp.errors import CircuitInvalid
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, schema

S = schema("k:bigint", "a:bigint", "d:double", "s:string")
BIG = 1.7e308


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def _paths(plan, spark):
    from dbsp.spark import SparkRuntime

    return {
        "reference": lambda: ReferenceRuntime(plan),
        "row-by-row": lambda: SparkRuntime(plan, spark),
        "arrow": lambda: SparkRuntime(plan, spark, vector_min_rows=0),
        "spark": lambda: SparkRuntime(plan, spark, driver_max_rows=0, arrow_max_rows=0),
    }


def _doc(node: tuple) -> dict:
    return circuit({"t": S}, [node, ("view", "output", {})], ["t.out->n.in", "n.out->view.in"])


def _rows(*rows):
    return [{"insert": dict(zip(["k", "a", "d", "s"], r))} for r in rows]


def _fails_on_every_path(doc, rows, spark, what: str, kind: str):
    plan = compile_plan(doc)
    changes = {"t": changes_from_records(rows, plan.inputs["t"])}
    for name, make in _paths(plan, spark).items():
        with pytest.raises(Exception) as err:
            make().step(changes)
        message = str(err.value)
        assert f"node 'n' ({kind}): " in message and what in message, (name, message[:600])


@pytest.mark.parametrize("expr, what", [
    ("d * 10", "a double must be finite"),
    ("d + d", "a double must be finite"),
    ("(d + d) - (d + d)", "a double must be finite"),  # inf - inf
    ("d / 1e-10", "a double must be finite"),
    ("-(d * 10)", "a double must be finite"),
    ("a * 4", "outside the bigint range"),
    ("a + a + a", "outside the bigint range"),
    ("-(a * 2) - a", "outside the bigint range"),
])
def test_a_map_that_overflows_fails_the_tick_naming_the_node_on_every_path(spark, expr, what):
    doc = _doc(("n", "map", {"columns": [{"name": "v", "expr": expr}]}))
    _fails_on_every_path(doc, _rows((1, 2**62, BIG, "x"), (2, 1, 1.0, "y")), spark, what, "map")


@pytest.mark.parametrize("expr, what", [
    ("abs(a - 4611686018427387904 - 4611686018427387904)", "outside the bigint range"),  # abs(-2^63)
    ("floor(d)", "outside the bigint range"),
    ("ceil(d * -1)", "outside the bigint range"),
])
def test_functions_that_overflow_fail_the_tick_naming_the_node(spark, expr, what):
    doc = _doc(("n", "map", {"columns": [{"name": "v", "expr": expr}]}))
    _fails_on_every_path(doc, _rows((1, 0, BIG, "x")), spark, what, "map")


@pytest.mark.parametrize("fn, column, what", [
    ("sum", "d", "a double must be finite"),
    ("avg", "d", "a double must be finite"),
    ("sum", "a", "outside the bigint range"),
    ("avg", "a", "outside the bigint range"),  # bigints are summed in 64 bits on every path
])
def test_an_aggregate_that_overflows_fails_the_tick_naming_the_node(spark, fn, column, what):
    doc = _doc(("n", "aggregate", {"group_by": ["k"], "aggregates": [{"fn": fn, "expr": column, "as": "v"}]}))
    _fails_on_every_path(doc, _rows((1, 2**62, BIG, "x"), (1, 2**62 + 1, BIG, "y"), (1, 2**62 + 2, 0.0, "z")), spark, what, "aggregate")


@pytest.mark.parametrize("fn", ["sum", "avg"])
def test_a_sum_past_the_smallest_bigint_fails_the_tick_naming_the_node(spark, fn):
    """-2^63 + -1 beside a max (the touched groups recomputed, by Arrow from 1k rows): the
    Arrow path's guard reads the values' range as Python ints (an Arrow abs() of -2^63
    wraps to -2^63 and once let such a sum wrap silently)."""
    doc = _doc(("n", "aggregate", {"group_by": ["k"], "aggregates": [{"fn": fn, "expr": "a", "as": "v"},
                                                                     {"fn": "max", "expr": "a", "as": "top"}]}))
    _fails_on_every_path(doc, _rows((1, -2**63, 0.0, "x"), (1, -1, 0.0, "y")), spark, "outside the bigint range", "aggregate")


@pytest.mark.parametrize("expr, message, position", [
    ("d + 1e400", "outside the double range", 4),
    ("a + 1180591620717411303424", "outside the bigint range", 4),  # 2^70
    ("a + " + "9" * 5000, "outside the bigint range", 4),
    ("a + 9223372036854775808", "outside the bigint range", 4),
    ("round(d, 31)", "at most 30 (limit MAX_ROUND_DIGITS)", 9),
])
def test_literals_out_of_range_are_refused_at_validation_with_their_position(expr, message, position):
    with pytest.raises(CircuitInvalid) as err:
        compile_plan(_doc(("n", "map", {"columns": [{"name": "v", "expr": expr}]})))
    [problem] = err.value.problems
    assert message in problem.message and problem.position == position and problem.node == "n"


def test_conversions_that_do_not_fit_are_null_and_rounding_agrees_on_every_path(spark):
    columns = {
        "huge_int": "CAST('" + "9" * 5000 + "' AS BIGINT)", "padded": "CAST('" + "0" * 5000 + "42' AS BIGINT)",
        "too_big": "CAST('1e400' AS DOUBLE)", "to_bigint": "CAST(d AS BIGINT)", "min": "-9223372036854775808",
        "r28": "round(d, 28)", "r30": "round(x, 30)", "r2": "round(x, 2)",
    }
    doc = _doc(("n", "map", {"columns": [{"name": n, "expr": e.replace("x", "(d / 7)")} for n, e in columns.items()]}))
    plan = compile_plan(doc)
    changes = {"t": changes_from_records(_rows((1, 0, BIG, "x"), (2, 0, 2.675, "y"), (3, 0, -1e-20, "z")), plan.inputs["t"])}
    outs = {name: make().step(changes).outputs["view"] for name, make in _paths(plan, spark).items()}
    assert all(o == outs["reference"] for o in outs.values()), outs
    by_r2 = {row[-1]: row for row, _ in outs["reference"]}
    row = by_r2[round(2.675 / 7, 2)]
    assert row[:5] == (None, 42, None, 2, -(2**63)) and row[5] == 2.675


@pytest.mark.parametrize("expr", ["concat(s, s, s)", "s || s || s", "replace(s, 'x', s)"])
def test_strings_beyond_the_limit_fail_the_tick_naming_the_node(spark, expr):
    doc = _doc(("n", "map", {"columns": [{"name": "v", "expr": expr}]}))
    half = "x" * (limits.MAX_STRING_CHARS // 2 + 1)
    _fails_on_every_path(doc, _rows((1, 0, 0.0, half)), spark, "MAX_STRING_CHARS", "map")


def test_strings_within_the_limit_are_computed_alike_on_every_path(spark):
    doc = _doc(("n", "map", {"columns": [{"name": "v", "expr": "replace(s, 'x', s)"}, {"name": "w", "expr": "concat(s, '!', s)"}]}))
    plan = compile_plan(doc)
    changes = {"t": changes_from_records(_rows((1, 0, 0.0, "axbx"), (2, 0, 0.0, "")), plan.inputs["t"])}
    outs = {name: make().step(changes).outputs["view"] for name, make in _paths(plan, spark).items()}
    assert all(o == outs["reference"] for o in outs.values())
    assert {r for r, _ in outs["reference"]} == {("aaxbxbaxbx", "axbx!axbx"), ("", "!")}


@pytest.mark.parametrize("fn, column, what", [("sum", "d", "a double must be finite"), ("sum", "a", "outside the bigint range")])
def test_an_aggregate_after_an_integral_overflows_naming_the_node(spark, fn, column, what):
    """With a stream primitive the circuit runs literally: the aggregate's input is the
    integral, a DataFrame on Spark, so the check runs inside the Spark job."""
    doc = circuit({"t": S}, [("i", "integrate", {}), ("n", "aggregate", {"group_by": ["k"], "aggregates": [{"fn": fn, "expr": column, "as": "v"}]}),
                             ("view", "output", {})], ["t.out->i.in", "i.out->n.in", "n.out->view.in"])
    _fails_on_every_path(doc, _rows((1, 2**62, BIG, "x"), (1, 2**62 + 1, BIG, "y"), (1, 2**62 + 2, 0.0, "z")), spark, what, "aggregate")


@pytest.mark.parametrize("kind, params", [
    ("tumbling_window", {"size": 10}),
    ("sliding_window", {"size": 10, "slide": 5}),
    ("session_window", {"gap": 5}),
])
@pytest.mark.parametrize("column, what", [("d", "a double must be finite"), ("a", "outside the bigint range")])
def test_a_window_aggregate_that_overflows_fails_the_tick_naming_the_node(spark, kind, params, column, what):
    doc = _doc(("n", kind, {"time": "k", "aggregates": [{"fn": "sum", "expr": column, "as": "v"}], **params}))
    _fails_on_every_path(doc, _rows((1, 2**62, BIG, "x"), (2, 2**62 + 1, BIG, "y"), (3, 2**62 + 2, 0.0, "z")), spark, what, kind)


def test_bigint_positions_beyond_sparks_int_agree_on_every_path(spark):
    """Spark's substr and element_at take ints: a bigint position past 2^31 failed the
    tick there (CAST_OVERFLOW) while the row form answered."""
    exprs = ["substring(s, 9999999999)", "substring(s, 2, 9999999999)", "substring(s, -5000000000, 5000000002)",
             "substring(s, a)", "substring(s, 1, a)", "element_at(l, a)", "element_at(l, 9999999999)", "element_at(l, -2)"]
    doc = circuit({"t": schema("a:bigint", "s:string", "l:array<bigint>")},
                  [("n", "map", {"columns": [{"name": f"c{i}", "expr": e} for i, e in enumerate(exprs)]}), ("view", "output", {})],
                  ["t.out->n.in", "n.out->view.in"])
    plan = compile_plan(doc)
    rows = [{"insert": {"a": 9999999999, "s": "hello", "l": [1, 2, 3]}}, {"insert": {"a": -9999999999, "s": "hi", "l": None}}]
    changes = {"t": changes_from_records(rows, plan.inputs["t"])}
    outs = {name: make().step(changes).outputs["view"] for name, make in _paths(plan, spark).items()}
    assert all(o == outs["reference"] for o in outs.values()), outs
    assert {r for r, _ in outs["reference"]} == {("", "ello", "hello", "", "hello", None, None, 2), ("", "i", "hi", "hi", "", None, None, None)}
