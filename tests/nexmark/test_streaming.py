"""The Structured Streaming texts of the Nexmark queries (bench/nexmark/streaming.py) on
real Spark, a small stream (1,000 events in two micro-batches): those Spark runs equal
DuckDB's own text over all events; those it refuses are refused in both output modes,
with Spark's error class recorded."""
from __future__ import annotations

import pytest

from bench.nexmark import engine, streaming
from bench.nexmark.queries import ORACLE
from connectors.nexmark_events import Config, NexmarkGenerator

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def stream():
    from dbsp.spark import get_session

    batches = list(NexmarkGenerator(Config(seed=5)).batches(1_000, 500))
    oracle = engine.DuckDBOracle(list(batches[0]))
    for batch in batches:
        for table, rows in batch.items():
            oracle.append(table, rows)
    files = streaming.EventFiles(batches)
    yield get_session(), files, oracle
    files.close()


# projections with Spark's date_format, hour() and split (q10, q14, q22); an aggregate with FILTER clauses, update mode (q17)
@pytest.mark.parametrize("query", ["q10", "q14", "q17", "q22"])
def test_runs_and_equals_duckdb(query, stream):
    spark, files, oracle = stream
    expected = oracle.answer(ORACLE[query])
    result = streaming.run_query(spark, query, files, 1_000, expected)
    assert result.get("matches_duckdb") is True, result
    assert result["micro_batches"] == 2 and result["mode"] == "update" and sum(expected.values()) > 0


@pytest.mark.parametrize("query, update, append", [
    ("q4", "_LEGACY_ERROR_TEMP_3102", "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"),  # aggregate over an aggregate
    ("q7", "_LEGACY_ERROR_TEMP_3102", "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"),  # a windowed max joined back
    ("q6", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING", "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING"),
    ("q15", "_LEGACY_ERROR_TEMP_3102", "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"),  # COUNT(DISTINCT ...)
    ("q16", "_LEGACY_ERROR_TEMP_3102", "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"),
])
def test_refused_with_its_error_class(query, update, append, stream):
    spark, files, _ = stream
    result = streaming.run_query(spark, query, files, 1_000, None)
    assert "events_per_s" not in result
    assert result["error_classes"] == {"update": update, "append": append}
    if query in ("q15", "q16"):
        assert result["refused"]["update"].startswith("Distinct aggregations are not supported")


def test_a_wrong_streaming_result_is_caught(stream):
    """The check compares: q17's DuckDB text with one more bid stands in for a wrong Spark result."""
    spark, files, oracle = stream
    expected = oracle.answer(ORACLE["q17"])
    expected[next(iter(expected))] += 1
    assert streaming.run_query(spark, "q17", files, 1_000, expected)["matches_duckdb"] is False
