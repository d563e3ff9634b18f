"""Nexmark queries through the engine on a small load (2,000 events in ticks of 500),
each tick's integrated view compared with DuckDB over the events so far (the check in
bench/nexmark/engine.py: DuckDB's own text of each query, bench/nexmark/queries.py)."""
from __future__ import annotations

import pytest

from bench.nexmark import engine
from connectors.nexmark_events import Config, NexmarkGenerator
from bench.nexmark.queries import ORACLE, QUERIES, refusal

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def batches():
    return list(NexmarkGenerator(Config(seed=5)).batches(2_000, 500))


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


# a join with a filter (q3), a window aggregate over rows (q6), a tumbling window (q12), a SQL function and hour()
# (q14), a top-k de-duplication (q18)
@pytest.mark.parametrize("query", ["q3", "q6", "q12", "q14", "q18"])
def test_query_equals_duckdb_at_every_tick_on_spark(query, batches, spark):
    result = engine.run_query(query, batches, spark=spark)
    assert result["ticks_checked"] == 4 and result["events"] == 2_000
    assert result["output_rows"] > 0  # the load reaches the query's rows (not an empty-equals-empty check)


@pytest.mark.parametrize("query", ["q2", "q4", "q6", "q7", "q8", "q9", "q10", "q14", "q15", "q16", "q17", "q19", "q22"])
def test_query_equals_duckdb_at_every_tick_on_the_reference(query, batches):
    result = engine.run_query(query, batches, backend="reference")
    assert result["ticks_checked"] == 4 and result["output_rows"] > 0


def test_the_oracle_texts_are_for_queries_that_compile():
    """The bench checks every query it runs: each query with a DuckDB text compiles,
    and each refused one names a line:column."""
    for q in QUERIES:
        problem = refusal(q)
        if q in ORACLE:
            assert problem is None, f"{q}: {problem}"
        else:
            assert problem is None or problem.split(":")[0].isdigit(), f"{q}: {problem}"


def test_a_wrong_view_is_caught(batches):
    """The check fails when the engine's output differs: q2's DuckDB text with another
    modulus stands in for a wrong engine."""
    original = ORACLE["q2"]
    ORACLE["q2"] = original.replace("% 123", "% 124")
    try:
        with pytest.raises(engine.Mismatch, match="q2 tick"):
            engine.run_query("q2", batches, backend="reference")
    finally:
        ORACLE["q2"] = original


def test_a_long_run_is_checked_once_after_the_last_tick(batches):
    """--no-check: no DuckDB after each tick, one comparison after the last; a wrong view is still caught."""
    result = engine.run_query("q2", batches, backend="reference", check=False, final_check=True)
    assert result["ticks_checked"] == 0 and result["final_checked"] is True and result["output_rows"] > 0
    original = ORACLE["q2"]
    ORACLE["q2"] = original.replace("% 123", "% 124")
    try:
        with pytest.raises(engine.Mismatch, match="q2 after the last tick \\(4\\)"):
            engine.run_query("q2", batches, backend="reference", check=False, final_check=True)
    finally:
        ORACLE["q2"] = original
