"""Benchmark: Nexmark q0-q22 through the engine, checked against DuckDB at every tick,
beside Spark Structured Streaming on the same events, and Feldera's and Flink's
published per-core figures.

1. Which queries compile (bench/nexmark/queries/qN.sql over tables.sql), the exact
   refusal of the others (line:column in the query's file).
2. For each compiling query: the generated events in ticks of `--batch` events through
   the engine (the Spark backend with its default paths; at 5,000-event ticks every
   node reports the driver's row path, past 10k rows some go to Spark), every tick's integrated output compared with DuckDB over the
   events so far; events/s (all events of the stream over the time in `step`), tick
   latency p50/p99, peak RSS growth.
3. The same query on Structured Streaming (bench/nexmark/streaming.py): events/s, its
   result checked against DuckDB, or its refusal per output mode.

   Then, unchecked, the input paced at `--paced` (0.5) of that events/s: tick latency
   p50/p99 from each batch's arrival to the end of its tick.

Run: SPARK_DRIVER_MEMORY=4g .venv/bin/python -m bench.nexmark --events 20000 --batch 5000
     [--queries q0 q1 ...] [--no-sss] [--no-check] [--paced 0.5] [--seed 1]
Prints one JSON object per query and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import subprocess
import time

from bench.nexmark import engine, streaming
from connectors.nexmark_events import Config, NexmarkGenerator
from bench.nexmark.queries import ORACLE, QUERIES, refusal

#: events/s on 16 cores, streaming: Feldera (Rust implementation, "default" language) and
#: Flink (stream mode), from feldera/feldera benchmark/README.md "Sample results"
#: ("16-core Nexmark Streaming Performance"); per core = / 16
PUBLISHED_16_CORES = {
    "q0": (6_973_987, 2_642_776), "q1": (6_595_871, 2_604_438), "q2": (6_748_549, 3_122_073),
    "q3": (6_608_075, 2_039_692), "q4": (4_233_521, 501_017), "q5": (6_589_786, 661_901), "q6": (3_997_921, None),
    "q7": (3_136_763, 281_262), "q8": (6_641_870, 2_103_271), "q9": (910_680, 209_547), "q10": (None, None),
    "q11": (None, 547_783), "q12": (6_682_259, 2_002_162), "q13": (3_675_255, 1_571_314),
    "q14": (6_858_711, 2_191_541), "q15": (3_539_322, 912_326), "q16": (810_701, 233_294),
    "q17": (3_870_269, 1_713_796), "q18": (1_358_216, 511_146), "q19": (1_201_216, 1_011_419),
    "q20": (1_352_192, 266_441), "q21": (6_634_820, 1_229_695), "q22": (6_305_568, 1_521_838),
}


def per_core(n):
    return f"{round(n / 16 / 1000):,}k" if n else "-"


def warm_up(spark, sss: bool):
    """Arrow's kernels, the engine's code paths and Spark's streaming planner are set up
    once per process: a throwaway run of q0 (engine and, when asked, Structured
    Streaming) on 2,000 events before anything is timed."""
    small = list(NexmarkGenerator(Config(seed=99)).batches(2_000, 1_000))
    engine.run_query("q0", small, spark=spark, check=False)
    if sss:
        files = streaming.EventFiles(small)
        try:
            streaming.run_query(spark, "q0", files, 2_000, None)
        finally:
            files.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=5_000, help="events per tick (and per micro-batch)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", nargs="+", default=QUERIES)
    parser.add_argument("--no-sss", action="store_true", help="skip Spark Structured Streaming")
    parser.add_argument("--no-check", action="store_true", help="skip the DuckDB check at every tick")
    parser.add_argument("--paced", type=float, default=0.5,
                        help="then run each query again, unchecked, with the input paced at this fraction of its "
                             "measured events/s, for tick latency at a fixed rate (0: skip)")
    args = parser.parse_args()
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # Spark's refusals: recorded below

    load_before = os.getloadavg()
    refusals = {q: refusal(q) for q in args.queries}
    for q in args.queries:
        print(json.dumps({"query": q, "compiles": refusals[q] is None, "refusal": refusals[q]}), flush=True)
    t0 = time.perf_counter()
    batches = list(NexmarkGenerator(Config(seed=args.seed)).batches(args.events, args.batch))
    generated = time.perf_counter() - t0
    print(json.dumps({"generator_events_per_s": round(args.events / generated)}), flush=True)

    from dbsp.spark import get_session

    spark = get_session()
    warm_up(spark, not args.no_sss)
    results = {}
    for q in args.queries:
        if refusals[q] is not None:
            continue
        gc.collect()
        try:
            results[q] = engine.run_query(q, batches, spark=spark, check=not args.no_check and q in ORACLE)
        except engine.Mismatch as error:
            results[q] = {"query": q, "error": f"wrong result: {error}"[:400]}
        except Exception as error:  # the engine's failure (TickFailed, ...): recorded, the bench goes on
            results[q] = {"query": q, "error": f"{type(error).__name__}: {error}"[:400]}
        print(json.dumps(results[q]), flush=True)
        if args.paced and results[q].get("events_per_s"):
            gc.collect()
            rate = args.paced * results[q]["events_per_s"]
            paced = engine.run_query(q, batches, spark=spark, check=False, rate=rate)
            results[q]["paced"] = {"rate": round(rate), "tick_ms_p50": paced["tick_ms_p50"], "tick_ms_p99": paced["tick_ms_p99"]}
            print(json.dumps({"paced": paced}), flush=True)

    sss = {}
    if not args.no_sss:
        oracle = engine.DuckDBOracle(list(batches[0]))
        for batch in batches:
            for table, rows in batch.items():
                oracle.append(table, rows)
        files = streaming.EventFiles(batches)
        try:
            for q in args.queries:
                if q in streaming.SPARK_SQL and refusals[q] is None:
                    gc.collect()
                    sss[q] = streaming.run_query(spark, q, files, args.events, oracle.answer(ORACLE[q]) if q in ORACLE else None)
                    print(json.dumps({"sss": sss[q]}), flush=True)
        finally:
            files.close()
    load_after = os.getloadavg()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nload average before {load_before[0]:.1f}, after: {uptime}")
    print(f"events: {args.events:,} in ticks of {args.batch:,}; generator {round(args.events / generated):,} events/s")
    print("\n| query | compiles | engine events/s | tick ms p50 / p99 | at the paced rate: events/s, tick ms p50 / p99 |"
          " peak RSS growth MiB | DuckDB at every tick | SSS events/s | engine / SSS | Feldera / Flink per core (published) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    notes = {"ours": [], "engine": [], "sss": []}
    for q in args.queries:
        feldera, flink = PUBLISHED_16_CORES.get(q, (None, None))
        published = f"{per_core(feldera)} / {per_core(flink)}"
        if refusals[q] is not None:
            notes["ours"].append(f"- {q}: `{refusals[q]}`")
            print(f"| {q} | no | - | - | - | - | - | - | - | {published} |")
            continue
        r, s = results.get(q, {}), sss.get(q, {})
        if "error" in r:
            notes["engine"].append(f"- {q}: {r['error']}")
            eng, lat, paced, mem, check = "failed", "-", "-", "-", "-"
        else:
            eng = f"{r['events_per_s']:,}"
            lat = f"{r['tick_ms_p50']} / {r['tick_ms_p99']}"
            p = r.get("paced")
            paced = f"{p['rate']:,}: {p['tick_ms_p50']} / {p['tick_ms_p99']}" if p else "-"
            mem = f"{r['peak_rss_growth_mib']}"
            check = f"equal ({r['ticks_checked']} ticks)" if r["ticks_checked"] else "not checked"
        if not s:
            ss, ratio = "-", "-"
        elif "events_per_s" in s:
            ok = "" if s.get("matches_duckdb", True) else f", differs from DuckDB: {s.get('check')}"
            ss = f"{s['events_per_s']:,} ({s['mode']}{ok})"
            ratio = f"{r['events_per_s'] / s['events_per_s']:.1f}x" if r.get("events_per_s") else "-"
        else:
            notes["sss"].append(f"- {q}: " + "; ".join(f"{m} mode: `{e[:200]}`" for m, e in s["refused"].items()))
            ss, ratio = "refused", "-"
        print(f"| {q} | yes | {eng} | {lat} | {paced} | {mem} | {check} | {ss} | {ratio} | {published} |")
    for title, key in (("Refused by our compiler (line:column in the query's file)", "ours"),
                       ("Compiled but failed or wrong in the engine", "engine"),
                       ("Refused by Structured Streaming (first line of its error, per output mode)", "sss")):
        if notes[key]:
            print(f"\n{title}:\n" + "\n".join(notes[key]))

if __name__ == "__main__":
    main()
