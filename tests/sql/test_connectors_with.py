"""`WITH ('connectors' = '[...]')` on CREATE TABLE and CREATE VIEW, in Feldera's spelling
(docs.feldera.com/connectors: a list of {transport: {name, config}, format: {name,
config}}), read into the document's connectors; every problem names its line:column."""
import pytest

from dbsp.sql import SqlError, compile_sql
from connectors.registry import kinds
from dbsp.validate import validate

SCRIPT = """CREATE TABLE orders (id BIGINT NOT NULL, customer VARCHAR, amount BIGINT)
WITH ('connectors' = '[{
  "name": "orders-kafka",
  "transport": {"name": "kafka_input",
                "config": {"bootstrap.servers": "broker:9092", "topics": ["orders"], "start_from": "earliest",
                           "group.id": "g1", "security.protocol": "SASL_SSL"}},
  "format": {"name": "json", "config": {"update_format": "debezium"}},
  "secrets_env": {"sasl.password": "KAFKA_PASSWORD"}
}, {
  "transport": {"name": "file_input", "config": {"path": "/data/orders", "follow": true}},
  "format": {"name": "csv"}
}]');
CREATE MATERIALIZED VIEW big_orders WITH ('connectors' = '[{
  "transport": {"name": "kafka_output", "config": {"bootstrap.servers": "broker:9092", "topic": "big"}},
  "format": {"name": "json", "config": {"update_format": "insert_delete"}}
}, {"name": "big-files", "transport": {"name": "file_output", "config": {"path": "/data/big"}}}]')
AS SELECT * FROM orders WHERE amount > 100;
"""


def nodes(doc):
    return {n["id"]: n for n in doc["nodes"]}


def test_feldera_connectors_become_the_documents_connectors():
    doc = compile_sql(SCRIPT)
    assert validate(doc) == []
    found = nodes(doc)
    assert found["orders"]["params"]["connectors"] == [
        {"name": "orders-kafka", "kind": "kafka_source",
         "config": {"bootstrap_servers": "broker:9092", "topic": "orders", "start": "earliest", "group_id": "g1",
                    "options": {"security.protocol": "SASL_SSL"}, "format": "debezium"},
         "secrets_env": {"sasl.password": "KAFKA_PASSWORD"}},
        {"name": "orders-in2", "kind": "file_source", "config": {"path": "/data/orders", "format": "csv"}},
    ]
    assert found["big_orders"]["params"]["connectors"] == [
        {"name": "big_orders-out", "kind": "kafka_sink", "config": {"bootstrap_servers": "broker:9092", "topic": "big"}},
        {"name": "big-files", "kind": "file_sink", "config": {"path": "/data/big"}},
    ]


def problem(text: str):
    with pytest.raises(SqlError) as caught:
        compile_sql(text)
    [found] = caught.value.problems
    return f"{found.span}: {found.message}"


VIEW = "\nCREATE VIEW v AS SELECT a FROM t;"


def at(text: str, needle: str) -> str:
    """line:column of the needle's first character in the text (the test's own count)."""
    before = text[:text.index(needle)]
    return f"{before.count(chr(10)) + 1}:{len(before) - (before.rfind(chr(10)) + 1) + 1}"


T = "CREATE TABLE t (a BIGINT) WITH ('connectors' = "


@pytest.mark.parametrize("text, needle, expected", [
    # the transport's name is pointed at (its opening quote), on the line it is on
    (T + "\n'[{\"transport\": {\"name\": \"ftp_input\"}}]');" + VIEW, '"ftp_input"',
     "connector 1 of t: unknown transport 'ftp_input' (transports: "
     + ", ".join(sorted(k.removesuffix("_source") + "_input" for k, s in kinds().items() if s.source)) + ")"),
    (T + "'[{\"transport\": {\"name\": \"file_output\", \"config\": {}}}]');" + VIEW, '"file_output"',
     "connector 1 of t: transport 'file_output' is an output; a table takes *_input transports"),
    (T + "'[{\"transport\": oops}]');" + VIEW, "oops", "'connectors' of t: not valid JSON: Expecting value"),
    (T + "'{}');" + VIEW, "'{}'", "'connectors' of t: a JSON list of connectors"),
    (T + "'[{\"transport\": {\"name\": \"kafka_input\", \"config\": {\"bootstrap.servers\": \"b\", \"topic\": \"x\", "
     "\"colour\": 1}}}]');" + VIEW, '"colour"', "connector 1 of t: unknown kafka_input option 'colour'"),
    (T + "'[{\"transport\": {\"name\": \"file_input\", \"config\": {\"path\": \"/x\"}}, \"format\": {\"name\": \"avro\"}}]');"
     + VIEW, '"avro"', "connector 1 of t: format 'avro' is not supported (json with insert_delete, debezium or raw; csv)"),
    ("CREATE TABLE t (a BIGINT) WITH ('colour' = 'red');" + VIEW, "'colour'",
     "unsupported: table property \"colour='red'\" (only WITH ('connectors' = '[...]'))"),
    ("CREATE TABLE t (a BIGINT);\nCREATE VIEW v WITH ('connectors' = '[{\"transport\": {\"name\": \"file_output\", "
     "\"config\": {}}, \"format\": {\"name\": \"csv\"}}]') AS SELECT a FROM t;", '"csv"',
     "connector 1 of v: a sink writes json with update_format insert_delete"),
    ("CREATE TABLE t (a BIGINT);\nCREATE LOCAL VIEW v WITH ('connectors' = '[{\"transport\": {\"name\": \"file_output\", "
     "\"config\": {\"path\": \"/x\"}}}]') AS SELECT a FROM t;\nCREATE VIEW w AS SELECT a FROM v;", "v WITH",
     "a LOCAL view has no output: connectors go on a view that is not LOCAL ('v')"),
])
def test_bad_connectors_in_sql_are_named_by_line_and_column(text, needle, expected):
    assert problem(text).startswith(f"{at(text, needle)}: {expected}"), (problem(text), at(text, needle))


def test_a_missing_option_is_the_engines_problem_named_with_the_table():
    text = T + "'[{\"transport\": {\"name\": \"file_input\"}}]');" + VIEW
    assert problem(text) == "1:14: table t: node 't': connectors[0] 't-in': file_source needs the option 'path'"


def test_exported_sql_reads_back_to_the_same_connectors():
    from dbsp.sql import export_sql

    doc = compile_sql(SCRIPT)
    found = nodes(doc)
    # a quote in a value ('' in the SQL string), options only our spelling has
    found["orders"]["params"]["connectors"][1]["config"].update({"path": "/data/o'brien", "pattern": "*.csv", "max_batch": 500})
    found["orders"]["params"]["connectors"].append(
        {"name": "stored", "kind": "kafka_source", "config": {"bootstrap_servers": "b:1", "topic": "t", "start": "stored",
                                                                   "format": "json", "columns": ["id"]}})
    text = export_sql(doc)
    assert "WITH ('connectors' = '[" in text
    again = nodes(compile_sql(text))
    for node in ("orders", "big_orders"):
        assert again[node]["params"]["connectors"] == found[node]["params"]["connectors"], node


def test_on_error_in_sql_reads_into_the_config_and_back():
    from dbsp.sql import export_sql

    text = ("CREATE TABLE t (a BIGINT) WITH ('connectors' = '[{\"transport\": {\"name\": \"kafka_input\", \"config\": "
            "{\"bootstrap.servers\": \"b\", \"topic\": \"x\", \"on_error\": \"dead_letter\"}}}, {\"transport\": "
            "{\"name\": \"file_input\", \"config\": {\"path\": \"/in\", \"on_error\": \"dead_letter\"}}}]');" + VIEW)
    doc = compile_sql(text)
    found = nodes(doc)["t"]["params"]["connectors"]
    assert [c["config"]["on_error"] for c in found] == ["dead_letter", "dead_letter"]
    assert nodes(compile_sql(export_sql(doc)))["t"]["params"]["connectors"] == found


def test_a_bad_on_error_is_the_engines_problem_named_with_the_table():
    text = T + "'[{\"transport\": {\"name\": \"file_input\", \"config\": {\"path\": \"/x\", \"on_error\": \"skip\"}}}]');" + VIEW
    assert problem(text) == ("1:14: table t: node 't': connectors[0] 't-in': on_error must be one of fail, dead_letter; "
                             "got 'skip'")
