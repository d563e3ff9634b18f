"""Where each value of a plan lives: its operator, the values its ports read, and how
deep inside fixed points it is (0: the top level). A fixed point's result is read
through its export's id, one level up from where the export node is."""
from __future__ import annotations

from dataclasses import dataclass

from ..operators import Operator
from ..plan import Plan


@dataclass
class Where:
    op: Operator
    sources: dict[str, str]  # port -> the key of the value it reads
    depth: int
    fixedpoint: str | None  # the fixed point node that holds it


def scopes(plan: Plan) -> dict[str, Where]:
    out: dict[str, Where] = {}
    for n in plan.order:
        op = plan.operators[n]
        out[n] = Where(op, plan.sources(n), 0, None)
        if op.kind == "fixedpoint":
            _inner(op, plan.sources(n), 1, out)
    return out


def _inner(fp, fp_sources: dict[str, str], depth: int, out: dict[str, Where]) -> None:
    sub = fp.sub
    for n in sub.order:
        op = sub.operators[n]
        sources = {"in": fp_sources[n]} if op.kind in ("import", "delta0") else sub.document.sources_of(n)
        out[n] = Where(op, sources, depth, fp.node_id)
        if op.kind == "fixedpoint":
            _inner(op, sub.document.sources_of(n), depth + 1, out)
