"""Compile a validated circuit into an executable incremental plan.

Chain rule: (Q1 ∘ Q2)^Δ = Q1^Δ ∘ Q2^Δ, so each operator is replaced by its own Δ form.
The operators this version has are all linear (their own Δ form, no state), so the plan
evaluates each node on its input's change per tick. Stateful Δ forms (joins, distinct,
aggregates) add integrals and delays here as they arrive.
"""
from __future__ import annotations

from dataclasses import dataclass

from .document import CircuitDocument
from .errors import CircuitInvalid
from .operators import Operator
from .types import Schema
from .validate import check


@dataclass
class Plan:
    document: CircuitDocument
    operators: dict[str, Operator]
    order: list[str]
    schemas: dict[str, Schema]

    @property
    def inputs(self) -> dict[str, Schema]:
        return {n: self.schemas[n] for n in self.order if self.operators[n].kind == "input"}

    @property
    def views(self) -> dict[str, Schema]:
        return {n: self.schemas[n] for n in self.order if self.operators[n].kind == "output"}

    def sources(self, node_id: str) -> dict[str, str]:
        """input port -> upstream node id."""
        return {port: ref.node for port, ref in self.document.inputs_of(node_id).items()}

    def describe(self) -> dict:
        """The plan as a circuit document, each node marked with its incremental form."""
        doc = self.document.to_json()
        for node in doc["nodes"]:
            op = self.operators[node["id"]]
            node["incremental"] = {"form": "linear" if op.linear else "stateful", "state": []}
        return doc


def compile_plan(data) -> Plan:
    """Validate and compile a circuit document; raise CircuitInvalid listing every problem."""
    v = check(data)
    if v.problems:
        raise CircuitInvalid(v.problems)
    return Plan(v.document, v.operators, v.order, v.schemas)
