"""Benchmark (a) and (b) of the engine issue, measured in one run:

(a) the transactions circuit (examples/circuits/transactions.json) with 10-row deltas
    over a state of N rows: tick latency of the incremental engine on Spark, against
    recomputing the same query on Spark from scratch, one trivial Spark job (the
    floor), and PyDBSP 2.1.0 (its README's own transactions pipeline) on the same data;
(b) bulk-load throughput (rows/s) of the same circuit with 10^5-row ticks, vs PyDBSP.

Run: SPARK_DRIVER_MEMORY=12g .venv/bin/python -m bench.transactions --sizes 10000 100000 1000000
     [--pydbsp-max 1000000] [--ticks 20]
Prints one JSON object per size and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa

from dbsp import compile_plan
from dbsp.spark import SparkRuntime, get_session

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "circuits" / "transactions.json"
COLUMNS = ["id", "from_acct", "to_acct", "amount"]


def transactions(start: int, n: int, accounts: int, rnd: random.Random) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "from_acct": pa.array([rnd.randrange(accounts) for _ in ids], pa.int64()),
        "to_acct": pa.array([rnd.randrange(accounts) for _ in ids], pa.int64()),
        "amount": pa.array([rnd.randrange(1, 1000) for _ in ids], pa.int64()),
        "__w": pa.array([1] * n, pa.int64()),
    })


def median_ms(samples):
    return round(statistics.median(samples) * 1000, 1)


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def floor_ms(spark, repeats=15):
    table = pa.table({"x": pa.array(range(10), pa.int64())})
    for _ in range(3):
        spark.createDataFrame(table).toArrow()
    return median_ms([timed(lambda: spark.createDataFrame(table).toArrow()) for _ in range(repeats)])


def load_chunks(size, batch, rnd):
    return [transactions(start, min(batch, size - start), max(size // 10, 10), rnd) for start in range(0, size, batch)]


def timed_load(fresh, push_into, chunks):
    """Seconds to push every chunk into a fresh engine; a load of at most 3 ticks is
    repeated 3 times (fresh engines) and the median taken, since one tick is one noisy
    sample. Returns (seconds, the last engine)."""
    times = []
    for _ in range(3 if len(chunks) <= 3 else 1):
        engine, seconds, TOTALS[id(engine)] = fresh(), 0.0, []
        for c in chunks:
            step = []
            seconds += timed(lambda c=c: step.append(push_into(engine, c)))
            observe(engine, step[0])  # outside the timing: the cross-check's view deltas
        times.append(seconds)
    return statistics.median(times), engine


#: engine -> the `total` view's deltas of every tick (the cross-check integrates them)
TOTALS: dict[int, list] = {}


def observe(engine, result) -> None:
    if result is not None and hasattr(result, "outputs_json"):
        TOTALS.setdefault(id(engine), []).extend(result.outputs_json().get("total", []))


def check_total(engine, tables: list[pa.Table]) -> int:
    """The incremental run's `total` (its deltas integrated) must equal the query
    recomputed from every row pushed, in plain Python: credits by to_acct, debits by
    from_acct, joined on the account, summed. Raises on a difference; returns the total."""
    credits, debits = {}, {}
    for t in tables:
        for f, to, a in zip(t["from_acct"].to_pylist(), t["to_acct"].to_pylist(), t["amount"].to_pylist()):
            credits[to] = credits.get(to, 0) + a
            debits[f] = debits.get(f, 0) + a
    expected = sum(credits[k] - debits[k] for k in credits.keys() & debits.keys())
    weights: dict = {}
    for d in TOTALS.get(id(engine), []):
        key = tuple(d["data"].values())
        weights[key] = weights.get(key, 0) + d["weight"]
    rows = [k for k, w in weights.items() if w != 0]
    got = rows[0][0] if len(rows) == 1 and all(weights[k] == 1 for k in rows) else rows
    if got != expected:
        raise AssertionError(f"cross-check failed: the incremental total is {got}, recomputed {expected}")
    return expected


def run_incremental(spark, plan, size, ticks, batch, rnd, recent_max=None):
    options = {"recent_max": recent_max} if recent_max is not None else {}
    chunks = load_chunks(size, batch, rnd)
    load_s, rt = timed_load(lambda: SparkRuntime(plan, spark, **options),
                            lambda rt, chunk: rt.step({"transactions": chunk}), chunks)
    samples, jobs = [], []
    for i in range(ticks):
        chunk = transactions(size + i * 10, 10, max(size // 10, 10), rnd)
        chunks.append(chunk)
        j0, step = rt.jobs, []
        samples.append(timed(lambda: step.append(rt.step({"transactions": chunk}))))
        jobs.append(rt.jobs - j0)
        observe(rt, step[0])
    warm = samples[3:] if len(samples) > 6 else samples
    total = check_total(rt, chunks)
    return {"tick_ms": median_ms(warm), "tick_jobs": statistics.median(jobs), "load_rows_per_s": round(size / load_s),
            "total_checked": total}


def run_recompute(spark, size, rnd, repeats=5):
    """The query evaluated from scratch on Spark over the whole table (+ a 10-row change)."""
    from pyspark.sql import functions as F

    state = spark.createDataFrame(transactions(0, size, max(size // 10, 10), rnd).drop(["__w"])).cache()
    state.count()

    def query():
        extra = spark.createDataFrame(transactions(size, 10, max(size // 10, 10), rnd).drop(["__w"]))
        t = state.unionByName(extra)
        credits = t.groupBy("to_acct").agg(F.sum("amount").alias("credits"))
        debits = t.groupBy("from_acct").agg(F.sum("amount").alias("debits"))
        balance = credits.join(debits, credits.to_acct == debits.from_acct).select(
            F.col("to_acct").alias("account"), (F.col("credits") - F.col("debits")).alias("balance")).cache()
        balance.toArrow()
        balance.agg(F.sum("balance")).toArrow()
        balance.unpersist()

    query()
    result = median_ms([timed(query) for _ in range(repeats)])
    state.unpersist()
    return result


def pydbsp_pipeline():
    """PyDBSP 2.1.0's own transactions pipeline (its README), built once per size."""
    from pydbsp.circuit import Circuit
    from pydbsp.compute import ComputeCtx
    from pydbsp.core import Antichain, dbsp_time
    from pydbsp.evaluate import Evaluator
    from pydbsp.indexed_relational_operators import (
        DeltaLiftedDeltaLiftedGroupBy, IndexedDeltaLiftedDeltaLiftedJoin, LiftIndex, LiftLiftIndex,
    )
    from pydbsp.indexed_zset import IndexedZSetAddition
    from pydbsp.operator import Input, Integrate, Lift1, LiftStreamIntroduction
    from pydbsp.storage import DictStorage
    from pydbsp.zset import ZSetAddition

    g_txn, g_kv, g_total = ZSetAddition(), ZSetAddition(), ZSetAddition()
    g_by_to = IndexedZSetAddition(g_txn, lambda r: r[2])
    g_by_from = IndexedZSetAddition(g_txn, lambda r: r[1])
    g_idx = IndexedZSetAddition(g_kv, lambda kv: kv[0])
    e = Evaluator(circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=dbsp_time(2)), group=g_txn)
    src = Input(frontier=Antichain(dbsp_time(1))).connect(e.circuit, ())
    src_2d = LiftStreamIntroduction(group=g_txn).connect(e.circuit, (src,))
    sum_amount = lambda items: sum(r[3] * w for r, w in items)  # noqa: E731
    credits = DeltaLiftedDeltaLiftedGroupBy(aggregate=sum_amount, group=g_by_to, out_group=g_kv).connect(
        e.circuit, (LiftLiftIndex(indexer=lambda r: r[2]).connect(e.circuit, (src_2d,)),))
    debits = DeltaLiftedDeltaLiftedGroupBy(aggregate=sum_amount, group=g_by_from, out_group=g_kv).connect(
        e.circuit, (LiftLiftIndex(indexer=lambda r: r[1]).connect(e.circuit, (src_2d,)),))
    balance_delta = IndexedDeltaLiftedDeltaLiftedJoin(
        proj=lambda k, c, d: (k, c[1] - d[1]), group_a=g_idx, group_b=g_idx, out_group=g_kv,
    ).connect(e.circuit, (LiftIndex(indexer=lambda kv: kv[0]).connect(e.circuit, (credits,)),
                          LiftIndex(indexer=lambda kv: kv[0]).connect(e.circuit, (debits,))))
    Integrate(group=g_kv).connect(e.circuit, (balance_delta,))
    sum_balance = lambda items: sum(b[1] * w for b, w in items)  # noqa: E731
    total_delta = DeltaLiftedDeltaLiftedGroupBy(
        aggregate=sum_balance, group=IndexedZSetAddition(g_kv, lambda _kv: ()), out_group=g_total,
    ).connect(e.circuit, (LiftLiftIndex(indexer=lambda _kv: ()).connect(e.circuit, (balance_delta,)),))
    total_cum = Integrate(group=g_total).connect(e.circuit, (total_delta,))
    total = Lift1(f=lambda z: next((c for (_k, c), _w in z.inner.items()), 0)).connect(e.circuit, (total_cum,))
    return e, src, total


def run_pydbsp(size, ticks, batch, rnd):
    from pydbsp.zset import ZSet

    def fresh():
        return [*pydbsp_pipeline(), 0]  # executor, source, total, tick

    def push_into(engine, table):
        e, src, total, tick = engine
        # PyDBSP evaluates lazily: reading the tick's total (as its README does) computes it.
        rows = zip(*(table[c].to_pylist() for c in COLUMNS))
        e.push(src, ZSet({r: 1 for r in rows}))
        e.read(total, (tick, 0))
        engine[3] += 1

    load_s, engine = timed_load(fresh, push_into, load_chunks(size, batch, rnd))
    samples = [timed(lambda: push_into(engine, transactions(size + i * 10, 10, max(size // 10, 10), rnd))) for i in range(ticks)]
    return {"tick_ms": median_ms(samples[3:] if len(samples) > 6 else samples), "load_rows_per_s": round(size / load_s)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--pydbsp-max", type=int, default=1_000_000, help="largest size to run PyDBSP on")
    parser.add_argument("--pydbsp-ticks", type=int, default=15,
                        help="10-row ticks for PyDBSP (each takes seconds at 10^6 rows; default 15)")
    parser.add_argument("--recent-max", type=int, default=None,
                        help="rows a trace keeps on the driver before moving to Spark (default: the runtime's)")
    parser.add_argument("--no-recompute", action="store_true")
    args = parser.parse_args()
    spark = get_session()
    plan = compile_plan(json.loads(EXAMPLE.read_text()))
    # Warm up both engines once (Arrow's compute kernels and Spark's code paths are set up
    # on first use, as they are once per worker process): a throwaway run of each.
    run_incremental(spark, plan, 20_000, 3, 10_000, random.Random(0))
    if args.pydbsp_max:
        run_pydbsp(20_000, 3, 10_000, random.Random(0))
    rows = []
    for size in args.sizes:
        rnd = random.Random(size)
        result = {"state_rows": size, "floor_ms": floor_ms(spark)}
        result |= {f"incremental_{k}": v for k, v in run_incremental(spark, plan, size, args.ticks, args.batch, rnd, args.recent_max).items()}
        result["recompute_ms"] = None if args.no_recompute else run_recompute(spark, size, rnd)
        if size <= args.pydbsp_max:
            result |= {f"pydbsp_{k}": v for k, v in run_pydbsp(size, min(args.ticks, args.pydbsp_ticks), args.batch, rnd).items()}
        result["floor_ms_after"] = floor_ms(spark)
        print(json.dumps(result), flush=True)
        rows.append(result)
    print("\n| state rows | floor ms | tick ms | tick/floor | jobs/tick | recompute ms | recompute/tick | PyDBSP tick ms | load rows/s | PyDBSP load rows/s | load ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        floor = (r["floor_ms"] + r["floor_ms_after"]) / 2
        tick = r["incremental_tick_ms"]
        py_tick = r.get("pydbsp_tick_ms", "not run")
        py_load = r.get("pydbsp_load_rows_per_s")
        ratio = f"{r['incremental_load_rows_per_s'] / py_load:.1f}x" if py_load else "-"
        recompute = r["recompute_ms"]
        speedup = f"{recompute / tick:.1f}x" if recompute else "-"
        print(f"| {r['state_rows']:,} | {floor:.0f} | {tick} | {tick / floor:.2f} | {r['incremental_tick_jobs']} | {recompute or '-'} | "
              f"{speedup} | {py_tick} | {r['incremental_load_rows_per_s']:,} | {py_load or '-'} | {ratio} |")


if __name__ == "__main__":
    sys.exit(main())
