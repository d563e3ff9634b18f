"""output: a view whose changes are observed (published per tick, integrated by clients).

Math: out[t] = consolidate(in[t]); the view's contents at tick t are I(out)[t].
"""
from __future__ import annotations

from .. import connector_specs
from .base import Operator


class Output(Operator):
    kind = "output"
    title = "Output view"
    category = "tables"
    outputs = ()

    def check(self, input_schemas):
        self.output_schema = input_schemas["in"]
        return connector_specs.check(self.node_id, self.params.get("connectors"), source=False)

    def query(self, inputs):
        return inputs["in"]

    def spark(self, ctx, inputs):
        return inputs["in"]
