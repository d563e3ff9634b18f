"""How long explaining a row takes (dbsp/explain: the reference evaluator's recomputation
of the run and the walk back), for the bound EXPLAIN_MAX_ROWS (runs/explain.py).

    .venv/bin/python -m bench.explain

An aggregate (sum by k, 10 groups) over n logged rows: one row's derivation shows a page
of its group (the group has n/10 rows). The transitive closure of a chain of n edges:
the path from 0 to n, found at iteration n-1 (the walk stops at its 200-step budget).
"""
import json
import time
from pathlib import Path

from dbsp import ZSet, compile_plan
from dbsp.explain import explain

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "circuits"


def _circuit(nodes, edges):
    return compile_plan({"format": "dbspweb.circuit", "version": 1, "nodes": nodes, "edges": [
        {"from": {"node": a, "port": pa}, "to": {"node": b, "port": pb}} for a, pa, b, pb in edges]})


def aggregate(n: int) -> float:
    plan = _circuit([{"id": "items", "kind": "input", "params": {"schema": [{"name": "k", "type": "bigint"},
                                                                          {"name": "v", "type": "bigint"}]}},
                     {"id": "sums", "kind": "aggregate", "params": {"group_by": ["k"], "aggregates": [
                         {"fn": "sum", "expr": "v", "as": "s"}]}},
                     {"id": "out", "kind": "output", "params": {}}],
                    [("items", "out", "sums", "in"), ("sums", "out", "out", "in")])
    changes = [{"items": ZSet([((v % 10, v), 1) for v in range(n - 1)])}, {"items": ZSet([((1, -1), 1)])}]
    total = sum(v for v in range(n - 1) if v % 10 == 1) - 1
    started = time.perf_counter()
    explain(plan, changes, 1, "out", (1, total))
    return time.perf_counter() - started


def closure(n: int) -> float:
    plan = compile_plan(json.loads((EXAMPLES / "transitive_closure.json").read_text()))
    changes = [{"edges": ZSet([((i, i + 1), 1) for i in range(n)])}]
    started = time.perf_counter()
    explain(plan, changes, 0, "closure", (0, n))
    return time.perf_counter() - started


if __name__ == "__main__":
    import os

    print("load average", os.getloadavg())
    for n in (1_000, 20_000, 100_000):
        print(f"aggregate over {n} rows: {aggregate(n):.2f} s")
    for n in (20, 50, 100):
        print(f"closure of a chain of {n} edges: {closure(n):.2f} s")
    print("load average", os.getloadavg())
