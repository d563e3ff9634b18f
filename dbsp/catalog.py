"""The operator catalog (for the editor's palette and the API): every operator kind
with its group, ports and documentation, read from the operator modules themselves."""
from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

from .operators import OPERATORS

SCHEMA_PATH = Path(__file__).with_name("circuit.schema.json")


@cache
def circuit_json_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def _class_flag(op, name: str) -> bool:
    """A class-level flag; one computed per instance (a property, e.g. export's `stream`,
    which depends on its mode) reads as False for the kind as a whole."""
    value = getattr(op, name)
    return bool(value) if not isinstance(value, property) else False


def operator_catalog() -> list[dict]:
    out = []
    for kind, op in OPERATORS.items():
        own = op.__doc__ if "__doc__" in vars(op) else None
        doc = (own or sys.modules[op.__module__].__doc__ or "").strip()
        out.append({
            "kind": kind,
            "title": op.title or kind,
            "category": op.category,
            "inputs": list(op.inputs),
            "outputs": list(op.outputs),
            "linear": _class_flag(op, "linear"),
            "stream": _class_flag(op, "stream"),
            "doc": doc,
        })
    return out
