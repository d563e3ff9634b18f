"""The circuit document's JSON Schema and the operator catalog stay true to the engine."""
import json
from pathlib import Path

import jsonschema
import pytest

from dbsp import validate
from dbsp.catalog import circuit_json_schema, operator_catalog
from dbsp.operators import OPERATORS

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "examples" / "circuits").glob("*.json") if not p.name.endswith(".meta.json"))


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(circuit_json_schema())


def test_the_schema_names_exactly_the_engines_operators():
    kinds = circuit_json_schema()["$defs"]["node"]["properties"]["kind"]["enum"]
    assert set(kinds) == set(OPERATORS)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_conforms_and_validates(path):
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, circuit_json_schema())
    assert validate(doc) == []


def test_the_schema_rejects_structural_mistakes():
    doc = json.loads(EXAMPLES[0].read_text())
    doc["nodes"][0]["kind"] = "teleport"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, circuit_json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"nodes": [{"id": "1x", "kind": "input"}]}, circuit_json_schema())


def test_catalog_documents_every_operator_with_its_math():
    catalog = {o["kind"]: o for o in operator_catalog()}
    assert set(catalog) == set(OPERATORS)
    assert catalog["join"]["inputs"] == ["left", "right"] and catalog["join"]["linear"] is False
    assert "Δ(a ⋈ b)" in catalog["join"]["doc"]
    assert "in[t] - in[t-1]" in catalog["differentiate"]["doc"]
    assert {o["category"] for o in catalog.values()} >= {"tables", "relational", "aggregates", "primitives"}
