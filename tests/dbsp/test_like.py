"""LIKE / ILIKE take time linear in the value on every path (row-by-row Python, Arrow,
all-Spark): the issue's poison patterns (`'%a%a…%a%b'` over 'a' × 3000) used to run for
ever in a backtracking `.*` regex. Results are checked against a dynamic-programming
matcher written here from SQL's definition, sharing no code with dbsp.functions."""
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbsp import compile_plan
from dbsp.errors import CircuitInvalid, ExpressionError
from dbsp.expr import parse_expression
from dbsp.functions import python_like
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.types import Schema
from tests.dbsp.helpers import circuit, schema


def oracle_like(value: str, pattern: str, insensitive: bool = False) -> bool:
    """SQL LIKE by dynamic programming over (position in value, position in pattern)."""
    if insensitive:
        value, pattern = value.lower(), pattern.lower()
    tokens, i = [], 0  # ("lit", ch) | ("one",) | ("any",)
    while i < len(pattern):
        if pattern[i] == "\\":
            tokens.append(("lit", pattern[i + 1]))
            i += 2
        else:
            tokens.append(("any",) if pattern[i] == "%" else ("one",) if pattern[i] == "_" else ("lit", pattern[i]))
            i += 1

    # row[t]: the value's prefix read so far matches the first t tokens
    row = [True] + [False] * len(tokens)
    for t, tok in enumerate(tokens):
        row[t + 1] = row[t] and tok[0] == "any"
    for ch in value:
        new = [False] * (len(tokens) + 1)
        for t, tok in enumerate(tokens):
            if tok[0] == "any":
                new[t + 1] = new[t] or row[t + 1]
            else:
                new[t + 1] = row[t] and (tok[0] == "one" or tok[1] == ch)
        row = new
    return row[-1]


POISON = ["%a" * 30 + "%b", "%a%a%a%a%b", "%" + "a_" * 12 + "%b", "a%" * 20 + "%a_b%"]
VALUES = ["a" * 3000, "a" * 400, "a" * 2999 + "b", "a" * 5000 + "\nb", None]
S = schema("s:string")


def _runtimes(plan, spark):
    from dbsp.spark import SparkRuntime

    return {
        "reference": ReferenceRuntime(plan),
        "row-by-row": SparkRuntime(plan, spark),  # small changes: each row in Python on the driver
        "arrow": SparkRuntime(plan, spark, vector_min_rows=0),
        "spark": SparkRuntime(plan, spark, driver_max_rows=0, arrow_max_rows=0),
    }


@pytest.mark.timeout(120)
def test_poison_patterns_finish_with_the_right_answer_on_every_path(spark):
    """Before: the first pattern never finished over 'a' × 3000, and '%a%a%a%a%b' over 400
    characters took 46 s (Spark and Python alike)."""
    columns = [{"name": f"m{i}", "expr": f"s LIKE '{p}'"} for i, p in enumerate(POISON)]
    columns += [{"name": f"i{i}", "expr": f"s ILIKE '{p.upper()}'"} for i, p in enumerate(POISON)]
    doc = circuit({"t": S}, [("m", "map", {"columns": [{"name": "s", "expr": "s"}, *columns]}), ("view", "output", {})],
                  ["t.out->m.in", "m.out->view.in"])
    plan = compile_plan(doc)
    changes = {"t": changes_from_records([{"insert": {"s": v}} for v in VALUES], plan.inputs["t"])}
    expected = {
        (v, *[None if v is None else oracle_like(v, p) for p in POISON],
         *[None if v is None else oracle_like(v, p.upper(), True) for p in POISON])
        for v in VALUES
    }
    assert any(r[1:] != (False,) * 8 and r[0] is not None for r in expected)  # some rows match, some do not
    for name, runtime in _runtimes(plan, spark).items():
        out = runtime.step(changes).outputs["view"]
        assert {row for row, _ in out} == expected, name


@pytest.mark.timeout(120)
def test_a_poisoned_filter_keeps_exactly_the_matching_rows_on_every_path(spark):
    doc = circuit({"t": S}, [("f", "filter", {"predicate": "s LIKE '" + POISON[0] + "'"}), ("view", "output", {})],
                  ["t.out->f.in", "f.out->view.in"])
    plan = compile_plan(doc)
    changes = {"t": changes_from_records([{"insert": {"s": v}} for v in VALUES], plan.inputs["t"])}
    for name, runtime in _runtimes(plan, spark).items():
        out = runtime.step(changes).outputs["view"]
        assert {row[0] for row, _ in out} == {"a" * 2999 + "b", "a" * 5000 + "\nb"}, name


ALPHABET = "ab\nA_%"
patterns = st.lists(st.sampled_from(["a", "b", "A", "\n", "%", "_", "\\%", "\\_", "\\\\", "İ"]), max_size=9).map("".join)
values = st.text(alphabet=ALPHABET + "\\İi", max_size=14)


@settings(max_examples=600, deadline=None)
@given(pattern=patterns, value=values, insensitive=st.booleans())
def test_python_like_equals_the_dynamic_programming_matcher(pattern, value, insensitive):
    assert python_like(value, pattern, insensitive) is oracle_like(value, pattern, insensitive)


@settings(max_examples=300, deadline=None)
@given(pattern=patterns, items=st.lists(values, min_size=1, max_size=6))
def test_arrow_like_equals_the_dynamic_programming_matcher(pattern, items):
    table = pa.table({"s": pa.array(items, pa.string())})
    expr = parse_expression(f"s LIKE '{pattern}'", Schema.from_list(S))
    from dbsp.arrow_expr import compile_arrow

    compiled = compile_arrow(expr)
    if "\\\\" in pattern:  # Arrow's match_like reads an escaped backslash otherwise: the row form runs it
        assert compiled is None
        return
    assert compiled(table).to_pylist() == [oracle_like(v, pattern) for v in items]
    assert pc.match_like(table["s"], pattern).to_pylist() == [oracle_like(v, pattern) for v in items]


def test_an_escaped_backslash_is_not_given_to_arrow():
    """pyarrow's match_like('\\', '%\\\\') is False where SQL says True (found by the
    property test above): such a pattern is left to the row form, which is right."""
    from dbsp.arrow_expr import compile_arrow

    expr = parse_expression("s LIKE '%\\\\'", Schema.from_list(S))
    assert compile_arrow(expr) is None
    assert python_like("a\\", "%\\\\", False) is oracle_like("a\\", "%\\\\") is True


def test_spark_like_equals_the_dynamic_programming_matcher(spark):
    """One Spark job: 150 random patterns (LIKE and ILIKE) over 40 random values."""
    import random

    rng = random.Random(17)
    tokens = ["a", "b", "A", "\n", "%", "_", "\\%", "\\_", "\\\\", "İ", "ß", "."]
    pats = ["".join(rng.choice(tokens) for _ in range(rng.randint(0, 8))) for _ in range(150)]
    vals = ["".join(rng.choice("ab\nA_%\\İi.") for _ in range(rng.randint(0, 12))) for _ in range(40)] + ["a" * 3000]
    sch = Schema.from_list(S)
    exprs = [parse_expression(f"s {'ILIKE' if i % 3 == 0 else 'LIKE'} '{p}'", sch) for i, p in enumerate(pats)]
    df = spark.createDataFrame([(v,) for v in vals], "s string")
    rows = df.select("s", *[e.to_spark().alias(f"c{i}") for i, e in enumerate(exprs)]).collect()
    for row in rows:
        for i, p in enumerate(pats):
            assert row[f"c{i}"] is oracle_like(row["s"], p, i % 3 == 0), (row["s"], p)


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


@pytest.mark.parametrize("text, message, position", [
    ("s LIKE 'ab\\c'", "a backslash in a LIKE pattern must precede %, _ or another backslash", 10),
    ("s LIKE 'ab\\'", "a backslash in a LIKE pattern must precede %, _ or another backslash", 10),
    ("s LIKE s", "the LIKE pattern must be a string literal", 7),
])
def test_patterns_spark_would_refuse_at_run_time_are_refused_at_validation(text, message, position):
    with pytest.raises(ExpressionError) as err:
        parse_expression(text, Schema.from_list(S))
    assert message in str(err.value) and err.value.position == position


def test_a_bad_pattern_is_named_in_the_circuit_problem():
    doc = circuit({"t": S}, [("f", "filter", {"predicate": "s LIKE 'x\\y'"}), ("view", "output", {})], ["t.out->f.in", "f.out->view.in"])
    with pytest.raises(CircuitInvalid) as err:
        compile_plan(doc)
    [problem] = err.value.problems
    assert problem.node == "f" and problem.param == "predicate" and problem.position == 9
