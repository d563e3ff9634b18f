"""Benchmark: the transitive closure written in Datalog (dbsp/datalog), compiled to a
circuit and run incrementally on Spark, against PyDBSP 2.1.0's Datalog engines, in one
run per graph (/work/shared/data/graph1000.txt and graph10000.txt):

1. dbspweb, the Datalog program below compiled by `dbsp.datalog.compile_program`:
   the initial load (every edge in one tick), then single-edge ticks alternating an
   insert of a new edge and a delete of an original one (bench/closure.py's changes).
   After the load and after every tick the integrated `reach` view is checked against a
   BFS closure recomputed in plain Python.
2. the same on the hand-drawn circuit (examples/circuits/transitive_closure.json), to
   show what compiling from Datalog costs (--no-drawn skips it);
3. PyDBSP's `IndexedIncrementalDatalogBody` (its indexed incremental Datalog
   interpreter, semi-naive in nested time) given the same two rules and driven as its
   stratified driver drives a body, and PyDBSP's `IncrementalDatalogStratified` (its
   public stratified-negation driver: push_rules / push_facts / saturate). Both are
   checked against the BFS closure after the load and after the ticks. Each phase has
   a time budget (--pydbsp-budget); one over it is stopped and noted;
4. the closure recomputed from scratch on Spark (bench/closure.py's semi-naive
   DataFrame loop) for the load and after one insert / one delete (--no-recompute skips).

The machine's load average (1 min) is recorded before and after each phase.

Run: SPARK_DRIVER_MEMORY=8g .venv/bin/python -m bench.datalog
     [--graphs graph1000 graph10000] [--ticks 5] [--pydbsp-budget 600]
Prints one JSON object per phase and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

from dbsp import compile_plan
from dbsp.datalog import compile_program
from dbsp.spark import SparkRuntime, get_session

from .closure import (EXAMPLE, apply, bfs_closure, edge_table, fold, load_graph, median_ms, run_dbspweb, run_pydbsp, run_recompute,
                      single_edge_changes)
from .transactions import floor_ms

PROGRAM = """
.decl edge(src: number, dst: number)
reach(src, dst) :- edge(src, dst).
reach(src, dst) :- reach(src, mid), edge(mid, dst).
"""


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


# ---- dbspweb: the compiled Datalog program ----------------------------------------------------
def run_datalog(spark, plan, edges, changes, truths):
    """Load and single-edge ticks; `truths[i]` is the BFS closure after tick i (0 = load)."""
    rt = SparkRuntime(plan, spark)
    fixpoint = next(n for n, op in plan.operators.items() if op.kind == "fixedpoint")
    reach: dict = {}
    j0, t0 = rt.jobs, time.perf_counter()
    result = rt.step({"edge": edge_table(edges)})
    load_s = time.perf_counter() - t0
    fold(reach, result, "reach")
    _check(reach, truths[0], "dbspweb (Datalog) after the load")
    out = {"load": {"ms": round(load_s * 1000, 1), "jobs": rt.jobs - j0, "iterations": result.frontier[fixpoint]["iteration"],
                    "closure": len(reach)}}
    samples = {"insert": [], "delete": []}
    for i, (kind, edge) in enumerate(changes, 1):
        j0, t0 = rt.jobs, time.perf_counter()
        result = rt.step({"edge": edge_table([edge], 1 if kind == "insert" else -1)})
        elapsed = time.perf_counter() - t0
        fold(reach, result, "reach")
        _check(reach, truths[i], f"dbspweb (Datalog) after tick {i}")
        samples[kind].append({"s": elapsed, "jobs": rt.jobs - j0, "iterations": result.frontier[fixpoint]["iteration"],
                              "delta": result.stats["reach"]["rows_out"]})
    for kind, s in samples.items():
        out[kind] = {"ms": median_ms([x["s"] for x in s]), "ms_all": [round(x["s"] * 1000, 1) for x in s],
                     "jobs": statistics.median([x["jobs"] for x in s]), "iterations": statistics.median([x["iterations"] for x in s]),
                     "delta_rows": [x["delta"] for x in s]}
    rt.close()
    return out


def _check(reach: dict, truth: set, what: str) -> None:
    assert set(reach) == truth and all(w == 1 for w in reach.values()), f"{what}: {len(reach)} pairs, BFS {len(truth)}"


# ---- PyDBSP's Datalog -----------------------------------------------------------------------------
def _pydbsp_rules():
    from pydbsp.datalog import Variable
    from pydbsp.zset import ZSet

    x, y, z = Variable("?X"), Variable("?Y"), Variable("?Z")
    return ZSet({(("reach", (x, y)), ("edge", (x, y))): 1, (("reach", (x, z)), ("reach", (x, y)), ("edge", (y, z))): 1})


class PyDBSPIndexedDatalog:
    """IndexedIncrementalDatalogBody (5 inputs: EDB, program, fact and rewrite state fed
    back per inner step, the identity rewrite seed), driven like PyDBSP's stratified
    driver drives its body: per outer tick, saturate the inner loop from the previous
    ticks' deepest iteration, pushing each step's diffs back as state."""

    def __init__(self):
        from pydbsp import datalog as dlg
        from pydbsp.circuit import Circuit
        from pydbsp.compute import ComputeCtx
        from pydbsp.core import Antichain, dbsp_time
        from pydbsp.evaluate import Evaluator
        from pydbsp.indexed_relational_operators import IndexedIncrementalDatalogBody
        from pydbsp.operator import Input, LiftStreamIntroduction
        from pydbsp.storage import DictStorage
        from pydbsp.zset import ZSet, ZSetAddition

        g = ZSetAddition()
        self.e = Evaluator(circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=dbsp_time(2)), group=g)
        c = self.e.circuit
        one, two = (lambda: Input(frontier=Antichain(dbsp_time(1))).connect(c, ())), (lambda: Input(frontier=Antichain(dbsp_time(2))).connect(c, ()))
        self.edb, program, self.facts_2d, self.rewrites_2d, seed = one(), one(), two(), two(), one()
        self.body = IndexedIncrementalDatalogBody(
            fact_group=g, rule_group=g, rewrite_group=g, signal_group=g, ext_dir_group=g, jorder_group=g, gatekeep_group=g,
            indexed_fact_group=g,
        ).connect(c, (self.edb, LiftStreamIntroduction(group=g).connect(c, (program,)), self.facts_2d, self.rewrites_2d, seed))
        self.e.push(seed, ZSet({(0, dlg._rewrite_monoid.identity()): 1}))
        self.e.push(program, _pydbsp_rules())
        self.outer = 0
        self.closure: dict = {}  # reach, integrated

    def tick(self, change: dict) -> int:
        from pydbsp.zset import ZSet

        o = self.outer
        self.e.push(self.edb, ZSet({("edge", e): w for e, w in change.items()}), t=(o,))
        min_inner = max((k for (o2, k) in self.e.frontiers()[self.facts_2d].elements if o2 < o), default=-1)
        last = 0
        for k, (facts, rewrites) in self.e.saturate_inner(self.body, o, is_empty=lambda d: not d[0].inner and not d[1].inner,
                                                          min_inner=min_inner):
            for (rel, row), w in facts.inner.items():
                if rel == "reach":
                    n = self.closure.get(row, 0) + w
                    if n:
                        self.closure[row] = n
                    else:
                        self.closure.pop(row, None)
            self.e.push(self.facts_2d, facts, t=(o, k))
            self.e.push(self.rewrites_2d, rewrites, t=(o, k))
            last = k
        self.outer += 1
        return last


class PyDBSPStratifiedDatalog:
    """IncrementalDatalogStratified: push_rules once, then push_facts + saturate per tick."""

    def __init__(self):
        from pydbsp.datalog_stratified import IncrementalDatalogStratified

        self.d = IncrementalDatalogStratified()
        self.d.push_rules(_pydbsp_rules())
        self.closure: dict = {}  # reach

    def tick(self, change: dict) -> None:
        from pydbsp.zset import ZSet

        self.d.push_facts(ZSet({("edge", e): w for e, w in change.items()}))
        state = self.d.saturate()
        self.closure = {row: w for (rel, row), w in state.inner.items() if rel == "reach"}


# ---- main -----------------------------------------------------------------------------------------
def run_graph(spark, plans, name, args):
    edges = load_graph(name)
    changes = single_edge_changes(edges, args.ticks, random.Random(args.seed))
    graphs = [edges]
    for c in changes:
        graphs.append(apply(graphs[-1], c))
    truths = [bfs_closure(g) for g in graphs]
    report = {"graph": name, "edges": len(edges), "closure": len(truths[0]), "floor_ms": floor_ms(spark), "load_average": {}}

    def phase(key, work):
        before = load_average()
        report[key] = work()
        report["load_average"][key] = [before, load_average()]
        print(json.dumps({"graph": name, "phase": key, "load_average": report["load_average"][key], **report[key]}), flush=True)

    phase("datalog", lambda: run_datalog(spark, plans["datalog"], edges, changes, truths))
    if not args.no_drawn:
        phase("drawn", lambda: run_dbspweb(spark, plans["drawn"], edges, changes, False, None, truths[0])[0])
    for key, engine in (("pydbsp_indexed", PyDBSPIndexedDatalog), ("pydbsp_stratified", PyDBSPStratifiedDatalog)):
        if args.pydbsp_budget > 0 and key.split("_")[1] in args.pydbsp:
            phase(key, lambda: run_pydbsp(edges, changes, args.pydbsp_budget, truths[0], truths[-1], engine))
    if not args.no_recompute:
        first_insert = next(c for c in changes if c[0] == "insert")
        first_delete = next(c for c in changes if c[0] == "delete")
        phase("recompute", lambda: {
            "load": run_recompute(spark, edges, None, args.repeats, truths[0]),
            "insert": run_recompute(spark, edges, first_insert, args.repeats, bfs_closure(apply(edges, first_insert))),
            "delete": run_recompute(spark, edges, first_delete, args.repeats, bfs_closure(apply(edges, first_delete))),
        })
    report["floor_ms_after"] = floor_ms(spark)
    return report


def table(reports) -> str:
    columns = [("datalog", "dbspweb Datalog"), ("drawn", "dbspweb drawn"), ("pydbsp_indexed", "PyDBSP indexed Datalog"),
               ("pydbsp_stratified", "PyDBSP stratified Datalog"), ("recompute", "recompute on Spark")]
    lines = ["| graph | phase | " + " | ".join(f"{title} ms" for _, title in columns) + " | PyDBSP indexed / dbspweb Datalog |",
             "|---|---|" + "---|" * (len(columns) + 1)]
    for r in reports:
        for phase in ("load", "insert", "delete"):
            cells = []
            for key, _ in columns:
                entry = (r.get(key) or {}).get(phase) or {}
                ms = entry.get("ms")
                cells.append(f"{ms:,}" if ms is not None else (entry.get("skipped") or (r.get(key) or {}).get("ticks_skipped") or "not run"))
            ours, theirs = r["datalog"][phase]["ms"], ((r.get("pydbsp_indexed") or {}).get(phase) or {}).get("ms")
            ratio = f"{theirs / ours:.1f}x" if theirs and ours else "-"
            label = "load" if phase == "load" else f"single-edge {phase}"
            lines.append(f"| {r['graph']} ({r['edges']:,} edges, closure {r['closure']:,}) | {label} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", nargs="+", default=["graph1000", "graph10000"])
    parser.add_argument("--ticks", type=int, default=5, help="single-edge inserts, and as many deletes")
    parser.add_argument("--repeats", type=int, default=1, help="timed recompute runs per phase (after one warm-up)")
    parser.add_argument("--pydbsp-budget", type=float, default=600.0, help="seconds per PyDBSP phase (load; ticks); 0 skips PyDBSP")
    parser.add_argument("--pydbsp", nargs="+", default=["indexed", "stratified"], help="which PyDBSP engines to run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-drawn", action="store_true")
    parser.add_argument("--no-recompute", action="store_true")
    args = parser.parse_args()
    spark = get_session()
    plans = {"datalog": compile_plan(compile_program(PROGRAM)), "drawn": compile_plan(json.loads(EXAMPLE.read_text()))}
    print(json.dumps({"cpus": os.cpu_count(), "load_average": os.getloadavg(), "args": vars(args)}), flush=True)
    reports = [run_graph(spark, plans, name, args) for name in args.graphs]
    print()
    print(table(reports))


if __name__ == "__main__":
    sys.exit(main())
