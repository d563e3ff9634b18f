"""Parquet in `WITH ('connectors' = ...)`: Feldera's `{"name": "parquet"}` format on a
file_input and a file_output, read into the file kinds' `format: parquet`, and exported
back the same; a Kafka output is refused a Parquet format by the engine's check."""
from dbsp.sql import compile_sql, export_sql
from dbsp.validate import validate

SCRIPT = """CREATE TABLE orders (id BIGINT NOT NULL, customer VARCHAR, amount BIGINT)
WITH ('connectors' = '[{"transport": {"name": "file_input", "config": {"path": "/data/in"}}, "format": {"name": "parquet"}}]');
CREATE MATERIALIZED VIEW big_orders WITH ('connectors' = '[
  {"transport": {"name": "file_output", "config": {"path": "/data/out"}}, "format": {"name": "parquet"}},
  {"name": "plain", "transport": {"name": "file_output", "config": {"path": "/data/json", "format": "jsonl"}}}]')
AS SELECT * FROM orders WHERE amount > 100;
"""


def connectors(doc):
    return {n["id"]: n["params"].get("connectors") for n in doc["nodes"] if n["params"].get("connectors")}


def test_parquet_files_in_sql_and_back():
    doc = compile_sql(SCRIPT)
    found = connectors(doc)
    assert found["orders"] == [{"name": "orders-in", "kind": "file_source", "config": {"path": "/data/in", "format": "parquet"}}]
    assert found["big_orders"] == [
        {"name": "big_orders-out", "kind": "file_sink", "config": {"path": "/data/out", "format": "parquet"}},
        {"name": "plain", "kind": "file_sink", "config": {"path": "/data/json", "format": "jsonl"}}]
    assert validate(doc) == []
    assert connectors(compile_sql(export_sql(doc))) == found


def test_a_kafka_output_in_parquet_is_refused():
    text = SCRIPT.replace('"file_output", "config": {"path": "/data/out"}', '"kafka_output", "config": {"bootstrap.servers": "b:1", "topic": "t"}')
    problems = [p.message if hasattr(p, "message") else str(p) for p in validate(compile_sql(text))]
    assert any("kafka_sink" in p and "'format'" in p for p in problems), problems
