"""Compile a validated circuit into an executable incremental plan.

A relational circuit (no DBSP primitives) denotes a query Q over tables; it runs as
Q^Δ = D ∘ Q ∘ I, which the chain rule (Q1 ∘ Q2)^Δ = Q1^Δ ∘ Q2^Δ turns into each
operator's own Δ form: linear operators unchanged and stateless; join, distinct and
aggregate with integrals (traces) of their inputs, delayed by one tick where the Δ rule
reads the old state. A circuit with primitives (z^-1, I, D) runs literally, as drawn.
`Plan.describe()` shows the compiled form as a circuit document.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import budget
from .document import CircuitDocument
from .errors import CircuitInvalid
from .operators import Operator
from .types import Schema
from .validate import check


#: Operators whose incremental state is a function of their integrated inputs alone.
RELATIONAL = {"input", "output", "filter", "map", "flat_map", "union", "difference", "distinct", "join",
              "semijoin", "antijoin", "left_join", "asof_join", "aggregate", "top_k", "window_aggregate"}


@dataclass
class Plan:
    document: CircuitDocument
    operators: dict[str, Operator]
    order: list[str]
    schemas: dict[str, Schema]

    @property
    def literal(self) -> bool:
        """True when the circuit uses DBSP primitives and so runs as drawn."""
        return any(op.stream for op in self.operators.values())

    @property
    def whole_tables(self) -> bool:
        """Whether every node's contents at a tick are the query over the whole input
        tables then (no DBSP primitives, no event-time windows: tick boundaries do not
        matter), so they can be recomputed in one step from the integrated inputs."""
        return not self.literal and all(op.kind in RELATIONAL or op.kind == "fixedpoint"
                                        for op in self.operators.values())

    @property
    def inputs(self) -> dict[str, Schema]:
        return {n: self.schemas[n] for n in self.order if self.operators[n].kind == "input"}

    @property
    def views(self) -> dict[str, Schema]:
        return {n: self.schemas[n] for n in self.order if self.operators[n].kind == "output"}

    def primary_key(self, input_name: str) -> list[str]:
        """The key columns of a keyed input (upsert semantics), or []."""
        return list(getattr(self.operators[input_name], "primary_key", None) or [])

    def sources(self, node_id: str) -> dict[str, str]:
        """input port -> the upstream value's key: a node id, or for a fixed point's
        output, the id of the export node inside it."""
        return self.document.sources_of(node_id)

    def describe(self) -> dict:
        """The compiled plan as a circuit document: every stateful Δ form's inserted
        integrals (I) and delays (z^-1) appear as nodes, and each node says its form."""
        doc = self.document.to_json()
        _drop_empty_positions(doc["nodes"])
        doc["mode"] = "literal" if self.literal else "incremental"
        extra_nodes, edges = [], []
        for node in doc["nodes"]:
            budget.check(f"node {node['id']!r}")
            op = self.operators[node["id"]]
            if op.kind == "fixedpoint":
                node["incremental"] = {"form": "fixedpoint", "state": op.describe_state()}
                _describe_inner(node["subcircuit"], op, incremental=not self.literal and op.relational_body)
                continue
            if self.literal or op.linear or op.stream:
                node["incremental"] = {"form": "stream" if op.stream else ("linear" if op.linear else "lifted"), "state": op.describe_state() if op.stream else []}
                continue
            node["incremental"] = {"form": "delta", "state": op.describe_state()}
            for port in op.inputs:
                src = self.document.inputs_of(node["id"])[port]
                i_id, z_id = f"{node['id']}__I_{port}", f"{node['id']}__z_{port}"
                extra_nodes += [
                    {"id": i_id, "kind": "integrate", "params": {}, "inserted": True, "state_of": node["id"]},
                    {"id": z_id, "kind": "delay", "params": {}, "inserted": True, "state_of": node["id"]},
                ]
                edges += [
                    {"from": {"node": src.node, "port": src.port}, "to": {"node": i_id, "port": "in"}},
                    {"from": {"node": i_id, "port": "out"}, "to": {"node": z_id, "port": "in"}},
                    {"from": {"node": z_id, "port": "out"}, "to": {"node": node["id"], "port": f"state_{port}"}},
                ]
        doc["nodes"] += extra_nodes
        doc["edges"] += edges
        return doc


def _drop_empty_positions(nodes: list[dict]) -> None:
    """A node the document did not place has no position in the plan (not {}: the browser
    lays out the nodes without one)."""
    for node in nodes:
        if not node.get("position"):
            node.pop("position", None)
        if "subcircuit" in node:
            _drop_empty_positions(node["subcircuit"]["nodes"])


def _describe_inner(sub_json: dict, fixedpoint, incremental: bool) -> None:
    """Mark each node inside a fixed point with the form it runs in."""
    for node in sub_json["nodes"]:
        op = fixedpoint.sub.operators[node["id"]]
        if op.kind == "fixedpoint":
            node["incremental"] = {"form": "fixedpoint", "state": op.describe_state()}
            _describe_inner(node["subcircuit"], op, incremental and op.relational_body)
        elif op.kind in ("import", "delta0", "export", "delay"):
            node["incremental"] = {"form": "boundary" if op.kind != "delay" else "inner delay", "state": []}
        elif not incremental or op.linear:
            node["incremental"] = {"form": "linear" if op.linear else "recomputed", "state": []}
        else:
            node["incremental"] = {"form": "delta per iteration", "state": op.describe_state()}


def compile_plan(data) -> Plan:
    """Validate and compile a circuit document; raise CircuitInvalid listing every problem."""
    v = check(data)
    if v.problems:
        raise CircuitInvalid(v.problems)
    return Plan(v.document, v.operators, v.order, v.schemas)
