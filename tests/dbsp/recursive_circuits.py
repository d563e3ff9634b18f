"""Recursive circuits for the fixed-point tests: transitive closure (from the example),
reachability with hop counts (an aggregate inside the recursion) and same-generation
(a three-way join inside it)."""
from __future__ import annotations

import json
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "circuits"
BIGINT = "bigint"


def _node(id, kind, **params):
    return {"id": id, "kind": kind, "params": params}


def _edge(a, b, ap="out", bp="in"):
    return {"from": {"node": a, "port": ap}, "to": {"node": b, "port": bp}}


def _input(id, *cols):
    return _node(id, "input", schema=[{"name": c, "type": BIGINT, "nullable": False} for c in cols])


def _cols(**exprs):
    return [{"name": k, "expr": v} for k, v in exprs.items()]


def transitive_closure() -> dict:
    return json.loads((EXAMPLES / "transitive_closure.json").read_text())


def hops_from_roots() -> dict:
    """hops(v) = the fewest edges from any root to v: min over (start ∪ z^-1(hops) ⋈ edges + 1)."""
    inner = {
        "nodes": [
            _node("e_in", "import"), _node("r_in", "import"),
            _node("start", "map", columns=_cols(node="node", hops="0")),
            _node("best_before", "delay"),
            _node("steps", "map", columns=_cols(node="src", next="dst")),
            _node("walk", "join", left_keys=["node"], right_keys=["node"]),
            _node("moved", "map", columns=_cols(node="next", hops="hops + 1")),
            _node("candidates", "union"),
            _node("best", "aggregate", group_by=["node"], aggregates=[{"fn": "min", "expr": "hops", "as": "hops"}]),
            _node("hops_out", "export"),
        ],
        "edges": [
            _edge("r_in", "start"), _edge("best", "best_before"), _edge("e_in", "steps"),
            _edge("best_before", "walk", bp="left"), _edge("steps", "walk", bp="right"),
            _edge("walk", "moved"), _edge("start", "candidates", bp="a"), _edge("moved", "candidates", bp="b"),
            _edge("candidates", "best"), _edge("best", "hops_out"),
        ],
    }
    fp = _node("reach", "fixedpoint", max_iterations=100)
    fp["subcircuit"] = inner
    return {
        "nodes": [_input("edges", "src", "dst"), _input("roots", "node"), fp, _node("hops", "output")],
        "edges": [_edge("edges", "reach", bp="e_in"), _edge("roots", "reach", bp="r_in"), _edge("reach", "hops", ap="hops_out")],
    }


def same_generation() -> dict:
    """sg(x, y) :- parent(x, p), parent(y, p), x <> y.
       sg(x, y) :- parent(x, a), sg(a, b), parent(y, b)."""
    inner = {
        "nodes": [
            _node("p_in", "import"),
            _node("px", "map", columns=_cols(x="child", p="parent")),
            _node("py", "map", columns=_cols(y="child", p="parent")),
            _node("siblings", "join", left_keys=["p"], right_keys=["p"]),
            _node("distinct_siblings", "filter", predicate="x <> y"),
            _node("sib_xy", "map", columns=_cols(x="x", y="y")),
            _node("sg_before", "delay"),
            _node("xa", "map", columns=_cols(x="child", a="parent")),
            _node("sg_ab", "map", columns=_cols(a="x", b="y")),
            _node("up", "join", left_keys=["a"], right_keys=["a"]),
            _node("yb", "map", columns=_cols(y="child", b="parent")),
            _node("down", "join", left_keys=["b"], right_keys=["b"]),
            _node("down_xy", "map", columns=_cols(x="x", y="y")),
            _node("both", "union"),
            _node("sg", "distinct"),
            _node("sg_out", "export"),
        ],
        "edges": [
            _edge("p_in", "px"), _edge("p_in", "py"), _edge("px", "siblings", bp="left"), _edge("py", "siblings", bp="right"),
            _edge("siblings", "distinct_siblings"), _edge("distinct_siblings", "sib_xy"),
            _edge("sg", "sg_before"), _edge("p_in", "xa"), _edge("sg_before", "sg_ab"),
            _edge("xa", "up", bp="left"), _edge("sg_ab", "up", bp="right"),
            _edge("p_in", "yb"), _edge("up", "down", bp="left"), _edge("yb", "down", bp="right"),
            _edge("down", "down_xy"), _edge("sib_xy", "both", bp="a"), _edge("down_xy", "both", bp="b"),
            _edge("both", "sg"), _edge("sg", "sg_out"),
        ],
    }
    fp = _node("generations", "fixedpoint")
    fp["subcircuit"] = inner
    return {
        "nodes": [_input("parents", "child", "parent"), fp, _node("same_generation", "output")],
        "edges": [_edge("parents", "generations", bp="p_in"), _edge("generations", "same_generation", ap="sg_out")],
    }
