"""input: a table that receives pushed changes.

Math: out[t] = the change pushed at tick t (a Z-set over the table's schema). In a
relational circuit the table's contents at t are I(out)[t].
Params: `schema`: [{"name": str, "type": bigint|double|string|boolean|date|timestamp or a
list type array<bigint|double|string|boolean>, "nullable": bool (default true)}, ...];
`primary_key` (optional): [column, ...] of scalar columns; `connectors` (optional): its sources,
checked by dbsp/connector_specs.py.

With a primary key the table is keyed (upsert, as Feldera's tables with a primary key):
the key's columns are NOT NULL, and the pushed records of a tick apply in order to the
current table T (key -> row):
- insert r: if T has r's key, the old row is replaced: out gets −T[key] + r; else +r;
- delete r: removes T[key] whatever its other values (−T[key]); a no-op if absent;
- a record of weight w is an insert (w = 1) or a delete (w = −1); |w| > 1 is rejected;
- several records for one key in one push: the last one wins (in effect: the tick's
  change for a key is −(the row before the tick) + (the row after it)).
So out[t] is always a change that keeps T a set with one row per key. State: T by key.

Without a primary key the table is a multiset: a push may delete only rows the table
holds (as many copies as it holds), else it is refused whole, naming the record and the
row (dbsp/inputs.py). `allow_negative` (optional, boolean, default false; not with a
primary key): the input is a plain Z-set as in DBSP, any weight is accepted and a row's
weight may go below zero (a delete of an absent row leaves a -1 row).
"""
from __future__ import annotations

from .. import connector_specs
from ..errors import Problem
from ..types import TYPES, Column, Schema, element_type
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
        if problems:
            return problems
        self.primary_key = []
        allow_negative = self.params.get("allow_negative", False)
        if not isinstance(allow_negative, bool):
            return [self.problem(f"parameter 'allow_negative' must be true or false, got {allow_negative!r}", param="allow_negative")]
        if allow_negative and self.params.get("primary_key") is not None:
            return [self.problem("allow_negative is for tables without a primary_key (a keyed table holds one row per key)",
                                 param="allow_negative")]
        self.allow_negative = allow_negative
        key = self.params.get("primary_key")
        if key is not None:
            names = [c.name for c in columns]
            if not isinstance(key, list) or not key or not all(isinstance(k, str) for k in key):
                return [self.problem("parameter 'primary_key' must be a non-empty list of column names", param="primary_key")]
            types = {c.name: c.type for c in columns}
            for name in key:
                if name not in names:
                    problems.append(self.problem(f"primary_key: unknown column {name!r} (columns: {', '.join(names)})", param="primary_key"))
                elif element_type(types[name]) is not None:
                    problems.append(self.problem(f"primary_key: column {name!r} is a list ({types[name]}); a key is made of scalar columns", param="primary_key"))
            if len(set(key)) != len(key):
                problems.append(self.problem("primary_key: a column is listed twice", param="primary_key"))
            if problems:
                return problems
            self.primary_key = list(key)
            columns = [Column(c.name, c.type, False) if c.name in self.primary_key else c for c in columns]
        self.output_schema = Schema(tuple(columns))
        return connector_specs.check(self.node_id, self.params.get("connectors"), source=True)

    def query(self, inputs):
        return inputs["in"]

    def reference_state(self, literal: bool):
        """A keyed table's executor in the reference evaluator (None: the default one)."""
        if not getattr(self, "primary_key", None):
            return None
        from ..upsert import KeyedTableReference

        return KeyedTableReference(self, literal)

    def spark(self, ctx, inputs):
        return inputs["in"]
