"""Benchmark (c) of the engine issue, measured in one run per graph:

transitive closure (examples/circuits/transitive_closure.json, input `edges`, view
`closure`) on /work/shared/data/graph1000.txt and graph10000.txt:
1. initial load: every edge in one tick (ms, closure size, inner iterations, Spark jobs);
2. single-edge ticks, alternating: insert a random edge not in the graph, delete a random
   edge of the graph (median ms and Spark jobs per insert / per delete tick); afterwards
   the integrated output is checked against a BFS closure computed in plain Python;
3. recompute on Spark: the closure from scratch with DataFrames (semi-naive: paths =
   edges, delta = edges, repeat delta = distinct(delta ⋈ edges) - paths until empty,
   each iteration's paths localCheckpointed) after one single-edge insert / delete;
4. PyDBSP 2.1.0: IndexedIncrementalReachabilityBody (semi-naive, nested time) driven as
   its own tests drive it; its integrated output is checked against the same BFS
   closure after the load and after the single-edge ticks (deletes included). Each of
   its phases has a time budget (--pydbsp-budget); a phase over it is stopped and noted;
5. the floor: one trivial Spark job (bench/transactions.py floor_ms).

Run: SPARK_DRIVER_MEMORY=8g .venv/bin/python -m bench.closure
     [--graphs graph1000 graph10000] [--ticks 10] [--pydbsp-budget 600] [--profile]
Prints one JSON object per phase and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import signal
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa

from dbsp import compile_plan
from dbsp.spark import SparkRuntime, get_session

from .transactions import floor_ms

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "circuits" / "transitive_closure.json"
DATA = Path("/work/shared/data")


# ---- the graph and the ground truth --------------------------------------------------
def load_graph(name: str) -> list[tuple[int, int]]:
    """Lines `src dst label`; duplicate edges are kept once (the closure is a set)."""
    edges = {}
    for line in (DATA / f"{name}.txt").read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 2:
            edges[(int(parts[0]), int(parts[1]))] = None
    return list(edges)


def bfs_closure(edges) -> set[tuple[int, int]]:
    """Every (a, b) with a path of length >= 1 from a to b, in plain Python."""
    adjacency: dict[int, list[int]] = {}
    for a, b in edges:
        adjacency.setdefault(a, []).append(b)
    out = set()
    for start, first in adjacency.items():
        seen, stack = set(), list(first)
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack.extend(adjacency.get(x, ()))
        out.update((start, x) for x in seen)
    return out


def single_edge_changes(edges, ticks: int, rnd: random.Random) -> list[tuple[str, tuple[int, int]]]:
    """Alternating ("insert", new edge), ("delete", present edge): `ticks` of each.
    Inserted edges join random pairs of the graph's nodes; deleted edges are original ones."""
    present = set(edges)
    nodes = sorted({n for e in edges for n in e})
    originals = sorted(present)
    out = []
    for _ in range(ticks):
        while True:
            new = (rnd.choice(nodes), rnd.choice(nodes))
            if new not in present:
                break
        present.add(new)
        out.append(("insert", new))
        while True:
            old = rnd.choice(originals)
            if old in present:
                break
        present.remove(old)
        out.append(("delete", old))
    return out


def churn_changes(edges, ticks: int, rnd: random.Random) -> list[tuple[str, tuple[int, int]]]:
    """Alternating ("delete", a random original edge), ("insert", the same edge back):
    `ticks` of each. The graph, its closure and the state return to where they were
    every second tick, so a long run measures cost against the number of ticks alone."""
    out = []
    originals = sorted(set(edges))
    for _ in range(ticks):
        edge = rnd.choice(originals)
        out += [("delete", edge), ("insert", edge)]
    return out


def apply(edges, change) -> list[tuple[int, int]]:
    kind, edge = change
    return edges + [edge] if kind == "insert" else [e for e in edges if e != edge]


def edge_table(edges, weight: int = 1) -> pa.Table:
    return pa.table({
        "src": pa.array([a for a, _ in edges], pa.int64()),
        "dst": pa.array([b for _, b in edges], pa.int64()),
        "__w": pa.array([weight] * len(edges), pa.int64()),
    })


def median_ms(samples):
    return round(statistics.median(samples) * 1000, 1) if samples else None


# ---- dbspweb ---------------------------------------------------------------------------
def fold(closure: dict, result, view: str = "closure") -> None:
    """Integrate a tick's delta of `view` (src, dst) (read from the driver-side Arrow rows)."""
    value = result._raw[view]
    if value is None:
        return
    t = value.table()
    for a, b, w in zip(t["src"].to_pylist(), t["dst"].to_pylist(), t["__w"].to_pylist()):
        n = closure.get((a, b), 0) + w
        if n:
            closure[(a, b)] = n
        else:
            closure.pop((a, b), None)


class LookupClock:
    """Seconds spent in trace lookups (driver probes and Spark lookup jobs), to split a
    tick's time between the traces and everything else (the fixed point's own work)."""

    def __init__(self):
        from dbsp.spark.trace import Trace

        self.seconds = 0.0
        original = Trace.lookup
        clock = self

        def lookup(trace, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(trace, *args, **kwargs)
            finally:
                clock.seconds += time.perf_counter() - t0

        self._restore = lambda: setattr(Trace, "lookup", original)
        Trace.lookup = lookup

    def close(self):
        self._restore()


def first_last(samples: list[float], n: int = 20) -> dict:
    """Medians (ms) of the first and the last n ticks, and their ratio (last / first)."""
    if len(samples) < 2 * n:
        return {}
    first, last = statistics.median(samples[:n]) * 1000, statistics.median(samples[-n:]) * 1000
    return {"ticks": len(samples), f"first{n}_ms": round(first, 1), f"last{n}_ms": round(last, 1), "last/first": round(last / first, 2)}


def run_dbspweb(spark, plan, edges, changes, profile: bool, recent_max: int | None = None, truth_load: set | None = None):
    rt = SparkRuntime(plan, spark, **({"recent_max": recent_max} if recent_max is not None else {}))
    clock = LookupClock()
    try:
        return _run_dbspweb(rt, edges, changes, profile, truth_load, clock)
    finally:
        clock.close()


def _run_dbspweb(rt, edges, changes, profile, truth_load, clock):
    closure: dict = {}
    load_profiler = cProfile.Profile() if profile else None
    j0, t0 = rt.jobs, time.perf_counter()
    if load_profiler is not None:
        load_profiler.enable()
    result = rt.step({"edges": edge_table(edges)})
    if load_profiler is not None:
        load_profiler.disable()
    load_s = time.perf_counter() - t0
    fold(closure, result)
    if truth_load is not None:
        assert set(closure) == truth_load and all(w == 1 for w in closure.values()), \
            f"dbspweb closure after the load: {len(closure)} pairs, BFS {len(truth_load)}"
    load = {"ms": round(load_s * 1000, 1), "closure": len(closure), "iterations": result.frontier["tc"]["iteration"],
            "jobs": rt.jobs - j0}
    ticks = {"insert": [], "delete": []}
    every, lookups = [], []  # all single-edge ticks in order: seconds, and seconds in trace lookups
    profiler = cProfile.Profile() if profile else None
    for i, (kind, edge) in enumerate(changes):
        j0 = rt.jobs
        l0 = clock.seconds
        t0 = time.perf_counter()
        if profiler is not None and i >= 2:  # the first pair warms up
            profiler.enable()
        result = rt.step({"edges": edge_table([edge], 1 if kind == "insert" else -1)})
        if profiler is not None:
            profiler.disable()
        elapsed = time.perf_counter() - t0
        every.append(elapsed)
        lookups.append(clock.seconds - l0)
        stats = result.stats
        fold(closure, result)
        ticks[kind].append({
            "s": elapsed, "jobs": rt.jobs - j0, "iterations": result.frontier["tc"]["iteration"],
            "closure_delta": stats.get("closure", {}).get("rows_out", 0),
            "inner": {n: stats[n]["ms"] for n in ("extend", "paths") if n in stats},
            "inner_rows": {n: stats[n]["rows_out"] for n in ("extend", "paths") if n in stats},
        })
    out = {"load": load}
    if len(every) >= 40:  # long runs: does a tick's cost grow with the number of ticks?
        out["over_time"] = first_last(every) | {"lookups": first_last(lookups),
                                                "outside_lookups": first_last([a - b for a, b in zip(every, lookups)])}
    for kind, samples in ticks.items():
        out[kind] = {
            "ms": median_ms([s["s"] for s in samples]),
            "ms_all": [round(s["s"] * 1000, 1) for s in samples],
            "jobs": statistics.median([s["jobs"] for s in samples]),
            "iterations": statistics.median([s["iterations"] for s in samples]),
            "closure_delta_rows": [s["closure_delta"] for s in samples],
            "inner_ms_median": {n: round(statistics.median([s["inner"][n] for s in samples]), 1) for n in samples[0]["inner"]},
            "inner_rows_median": {n: statistics.median([s["inner_rows"][n] for s in samples]) for n in samples[0]["inner_rows"]},
        }
    state = {n: s.get("state_rows") for n, s in result.stats.items() if s.get("state_rows")}
    out["state_rows"] = state
    if profiler is not None:
        buffer = io.StringIO()
        for title, p in (("initial load", load_profiler), ("single-edge ticks after the first two", profiler)):
            buffer.write(f"==== cProfile: {title}\n")
            pstats.Stats(p, stream=buffer).sort_stats("cumulative").print_stats(35)
        out["profile"] = buffer.getvalue()
    return out, closure


# ---- recompute on Spark -----------------------------------------------------------------
def spark_closure(spark, edges_df):
    """Semi-naive transitive closure with DataFrames; returns (paths DataFrame, iterations).
    Each iteration's new paths are localCheckpointed (lineage stays one level deep) and
    paths is the union of those checkpoints: two Spark jobs per iteration."""
    from pyspark.sql import functions as F

    step = edges_df.select(F.col("src").alias("mid"), F.col("dst").alias("hop"))
    delta = edges_df.distinct().localCheckpoint(eager=True)
    parts = [delta]
    iterations = 0
    while True:
        iterations += 1
        paths = parts[0]
        for part in parts[1:]:
            paths = paths.unionByName(part)
        longer = delta.join(step, delta.dst == step.mid).select(delta.src, F.col("hop").alias("dst")).distinct()
        fresh = longer.join(paths, ["src", "dst"], "left_anti").localCheckpoint(eager=True)
        if fresh.isEmpty():
            return paths, iterations
        parts.append(fresh)
        delta = fresh


def run_recompute(spark, edges, change, repeats: int, check: set | None):
    """The closure from scratch on Spark after `change`, or of the whole graph (what the
    initial load computes) when `change` is None; checked against `check` once."""
    after = edges if change is None else apply(edges, change)
    table = edge_table(after).drop(["__w"])
    samples, iterations, size = [], 0, 0
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        df = spark.createDataFrame(table).cache()
        paths, iterations = spark_closure(spark, df)
        result = paths.toArrow()
        elapsed = time.perf_counter() - t0
        df.unpersist()
        size = result.num_rows
        if i == 0 and check is not None:
            got = set(zip(result["src"].to_pylist(), result["dst"].to_pylist()))
            assert got == check, f"recompute: {len(got)} pairs, BFS {len(check)}"
        if i > 0:  # the first run warms up
            samples.append(elapsed)
    return {"ms": median_ms(samples), "iterations": iterations, "closure": size}


# ---- PyDBSP -------------------------------------------------------------------------------
class OverBudget(Exception):
    pass


def _alarm(signum, frame):
    raise OverBudget()


class PyDBSPClosure:
    """PyDBSP 2.1.0's indexed semi-naive reachability, wired as its own tests wire it."""

    def __init__(self):
        from pydbsp.circuit import Circuit
        from pydbsp.compute import ComputeCtx
        from pydbsp.core import Antichain, dbsp_time
        from pydbsp.evaluate import Evaluator
        from pydbsp.indexed_relational_operators import IndexedIncrementalReachabilityBody
        from pydbsp.operator import Input
        from pydbsp.storage import DictStorage
        from pydbsp.zset import ZSetAddition

        eg = ZSetAddition()
        self.e = Evaluator(circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=dbsp_time(2)), group=eg)
        self.edges_1d = Input(frontier=Antichain(dbsp_time(1))).connect(self.e.circuit, ())
        self.state_2d = Input(frontier=Antichain(dbsp_time(2))).connect(self.e.circuit, ())
        self.body = IndexedIncrementalReachabilityBody(edge_group=eg).connect(self.e.circuit, (self.edges_1d, self.state_2d))
        self.outer = 0
        self.closure: dict = {}

    def tick(self, change: dict) -> int:
        from pydbsp.zset import ZSet

        o = self.outer
        self.e.push(self.edges_1d, ZSet(change))
        min_inner = max((k for (o2, k) in self.e.frontiers()[self.state_2d].elements if o2 < o), default=-1)
        last = 0
        for k, diff in self.e.saturate_inner(self.body, o, is_empty=lambda d: not d.inner, min_inner=min_inner):
            for row, w in diff.inner.items():
                n = self.closure.get(row, 0) + w
                if n:
                    self.closure[row] = n
                else:
                    self.closure.pop(row, None)
            self.e.push(self.state_2d, diff, t=(o, k))
            last = k
        self.outer += 1
        return last


def run_pydbsp(edges, changes, budget: float, truth_load: set, truth_end: set, engine=None):
    """Load and single-edge ticks of a PyDBSP engine (PyDBSPClosure by default: an object
    with tick(change) -> inner iterations and the integrated `closure`), within `budget`."""
    out: dict = {}
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        p = (engine or PyDBSPClosure)()
        signal.setitimer(signal.ITIMER_REAL, budget)
        try:
            t0 = time.perf_counter()
            iterations = p.tick({e: 1 for e in edges})
            out["load"] = {"ms": round((time.perf_counter() - t0) * 1000, 1), "iterations": iterations,
                           "closure": len(p.closure), "correct": set(p.closure) == truth_load and all(w == 1 for w in p.closure.values())}
        except OverBudget:
            out["load"] = {"skipped": f"the initial load took more than the {budget:.0f} s budget"}
            return out
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        ticks = {"insert": [], "delete": []}
        signal.setitimer(signal.ITIMER_REAL, budget)
        try:
            for kind, edge in changes:
                t0 = time.perf_counter()
                p.tick({edge: 1 if kind == "insert" else -1})
                ticks[kind].append(time.perf_counter() - t0)
        except OverBudget:
            out["ticks_skipped"] = f"the single-edge ticks took more than the {budget:.0f} s budget after {sum(map(len, ticks.values()))} ticks"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if "ticks_skipped" not in out:
            out["correct_after_ticks"] = set(p.closure) == truth_end and all(w == 1 for w in p.closure.values())
        for kind, samples in ticks.items():
            out[kind] = {"ms": median_ms(samples), "ms_all": [round(s * 1000, 1) for s in samples]}
        return out
    finally:
        signal.signal(signal.SIGALRM, previous)


# ---- main ---------------------------------------------------------------------------------
def run_graph(spark, plan, name, args):
    rnd = random.Random(args.seed)
    edges = load_graph(name)
    changes = (churn_changes if args.churn else single_edge_changes)(edges, args.ticks, rnd)
    truth_load = bfs_closure(edges)
    final = list(edges)
    for c in changes:
        final = apply(final, c)
    truth_end = bfs_closure(final)
    report = {"graph": name, "edges": len(edges), "nodes": len({n for e in edges for n in e}), "closure": len(truth_load),
              "floor_ms": floor_ms(spark), "recent_max": args.recent_max, "load_average_before": os.getloadavg()[0]}

    incremental, closure = run_dbspweb(spark, plan, edges, changes, args.profile, args.recent_max, truth_load)
    assert set(closure) == truth_end and all(w == 1 for w in closure.values()), \
        f"dbspweb closure after the ticks: {len(closure)} pairs, BFS {len(truth_end)}"
    profile = incremental.pop("profile", None)
    report["dbspweb"] = incremental | {"correct": True}
    print(json.dumps({"graph": name, "phase": "dbspweb", **report["dbspweb"]}), flush=True)
    if profile:
        print(profile, file=sys.stderr, flush=True)

    first_insert = next(c for c in changes if c[0] == "insert")
    first_delete = next(c for c in changes if c[0] == "delete")
    if args.no_recompute:
        report["recompute"] = None
    else:
        report["recompute"] = {
            "load": run_recompute(spark, edges, None, args.repeats, truth_load),
            "insert": run_recompute(spark, edges, first_insert, args.repeats, bfs_closure(apply(edges, first_insert))),
            "delete": run_recompute(spark, edges, first_delete, args.repeats, bfs_closure(apply(edges, first_delete))),
        }
        print(json.dumps({"graph": name, "phase": "recompute", **report["recompute"]}), flush=True)

    if args.pydbsp_budget > 0:
        report["pydbsp"] = run_pydbsp(edges, changes, args.pydbsp_budget, truth_load, truth_end)
        print(json.dumps({"graph": name, "phase": "pydbsp", **report["pydbsp"]}), flush=True)
    else:
        report["pydbsp"] = {"load": {"skipped": "not run (--pydbsp-budget 0)"}}
    report["floor_ms_after"] = floor_ms(spark)
    report["load_average_after"] = os.getloadavg()[0]
    print(json.dumps({"graph": name, "load_average": [report["load_average_before"], report["load_average_after"]]}), flush=True)
    return report


def ratio(theirs, ours) -> str:
    if not theirs:
        return "-"
    r = theirs / ours
    return f"{r:.1f}x" if r >= 1 else f"{r:.2f}x"


def table(reports) -> str:
    lines = ["| graph | phase | dbspweb ms | Spark jobs | inner iterations | recompute ms | recompute/dbspweb | PyDBSP ms | PyDBSP/dbspweb |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in reports:
        floor = (r["floor_ms"] + r["floor_ms_after"]) / 2
        for phase in ("load", "insert", "delete"):
            ours = r["dbspweb"][phase]
            ms = ours["ms"]
            rec = (r["recompute"] or {}).get(phase, {}).get("ms")
            py = r["pydbsp"].get(phase, {})
            py_ms = py.get("ms")
            py_text = f"{py_ms:,}" if py_ms is not None else (py.get("skipped") or r["pydbsp"].get("ticks_skipped") or "not run")
            lines.append(
                f"| {r['graph']} ({r['edges']:,} edges, closure {r['closure']:,}) | {phase if phase == 'load' else 'single-edge ' + phase} | "
                f"{ms:,} | {ours['jobs']:g} | {ours['iterations']:g} | {f'{rec:,}' if rec else '-'} | "
                f"{ratio(rec, ms)} | {py_text} | {ratio(py_ms, ms)} |")
        lines.append(f"| {r['graph']} | floor (trivial Spark job) | {floor:.0f} | 1 | - | - | - | - | - |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", nargs="+", default=["graph1000", "graph10000"])
    parser.add_argument("--ticks", type=int, default=10, help="single-edge inserts, and as many deletes")
    parser.add_argument("--repeats", type=int, default=3, help="timed recompute runs per phase (after one warm-up)")
    parser.add_argument("--pydbsp-budget", type=float, default=600.0,
                        help="seconds PyDBSP may spend on its load, and again on its ticks; 0 skips it")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-recompute", action="store_true")
    parser.add_argument("--recent-max", type=int, default=None,
                        help="rows a trace keeps on the driver before moving to Spark (default: the runtime's)")
    parser.add_argument("--churn", action="store_true",
                        help="single-edge ticks delete an original edge and insert it back (state stays the same size)")
    parser.add_argument("--profile", action="store_true", help="cProfile the dbspweb load and single-edge ticks (to stderr)")
    args = parser.parse_args()
    print(json.dumps({"load_average": os.getloadavg(), "args": vars(args)}), flush=True)
    spark = get_session()
    plan = compile_plan(json.loads(EXAMPLE.read_text()))
    reports = [run_graph(spark, plan, name, args) for name in args.graphs]
    print()
    print(table(reports))


if __name__ == "__main__":
    sys.exit(main())
