"""input: a table that receives pushed changes.

Math: out[t] = the change pushed at tick t (a Z-set over the table's schema). In a
relational circuit the table's contents at t are I(out)[t].
Params: `schema`: [{"name": str, "type": bigint|double|string|boolean|date|timestamp,
"nullable": bool (default true)}, ...].
"""
from __future__ import annotations

from ..errors import Problem
from ..types import TYPES, Column, Schema
from .base import Operator, valid_column_name


class Input(Operator):
    kind = "input"
    title = "Input table"
    category = "tables"
    inputs = ()

    def check(self, input_schemas):
        problems: list[Problem] = []
        raw = self.params.get("schema")
        if not isinstance(raw, list) or not raw:
            return [self.problem("parameter 'schema' must be a non-empty list of columns", param="schema")]
        columns, seen = [], set()
        for i, col in enumerate(raw):
            if not isinstance(col, dict):
                problems.append(self.problem(f"schema[{i}] must be an object with name and type", param="schema"))
                continue
            name, type_ = col.get("name"), col.get("type")
            if not valid_column_name(name):
                problems.append(self.problem(f"schema[{i}]: column name {name!r} must be letters, digits and _", param="schema"))
                continue
            if name in seen:
                problems.append(self.problem(f"schema: duplicate column {name!r}", param="schema"))
                continue
            if type_ not in TYPES:
                problems.append(self.problem(f"schema: column {name!r} has unknown type {type_!r} (one of {', '.join(TYPES)})", param="schema"))
                continue
            seen.add(name)
            columns.append(Column(name, type_, bool(col.get("nullable", True))))
        if not problems:
            self.output_schema = Schema(tuple(columns))
        return problems

    def query(self, inputs):
        return inputs["in"]

    def spark(self, ctx, inputs):
        return inputs["in"]
