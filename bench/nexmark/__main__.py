"""Benchmark: Nexmark q0-q22 through the engine on one core and on two, checked against
DuckDB, beside Spark Structured Streaming on the same events and cores, and Feldera's
and Flink's published per-core figures.

1. Which queries compile (bench/nexmark/queries/qN.sql over tables.sql), the exact
   refusal of the others (line:column in the query's file).
2. One child process per core configuration (bench/nexmark/cores.py): `--cores 1 2`
   starts `taskset -c 0` with Spark `local[1]` and `taskset -c 0,1` with `local[2]`;
   each generates the same events (same seed, ticks of `--batch` events), warms up and
   is then asked query by query, the two in turn (ABBA order).
3. For each compiling query, in each configuration: the events through the engine (the
   Spark backend, default paths), events/s (all events of the stream over the time in
   `step`), tick latency p50/p99, peak RSS growth; checked against DuckDB after every
   tick, or with `--no-check` once after the last tick (a long run's per-tick check
   re-runs the query over all events each tick).
4. Then, unchecked, the input paced at `--paced` (0.5) of that events/s: tick latency
   p50/p99 from each batch's arrival to the end of its tick (0: skip).
5. The same query on Structured Streaming (bench/nexmark/streaming.py) in each
   configuration: events/s, its result checked against DuckDB over all events, or its
   refusal per output mode with Spark's error class.

Run: SPARK_DRIVER_MEMORY=4g .venv/bin/python -m bench.nexmark --events 20000 --batch 5000
     [--queries q0 q1 ...] [--cores 1 2] [--no-sss] [--no-check] [--paced 0.5] [--seed 1]
Prints one JSON object per measurement and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess

from bench.nexmark import cores as core_configs
from bench.nexmark import streaming
from bench.nexmark.queries import QUERIES, refusal

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


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def measure(workers: dict[int, core_configs.Worker], requests: list[dict]) -> dict[int, dict[str, dict]]:
    """Each request to every configuration, the order of configurations alternating."""
    out = {c: {} for c in workers}
    for i, request in enumerate(requests):
        for c in core_configs.turns(list(workers), i):
            result = workers[c].ask(request)
            out[c][request["query"]] = result
            print(json.dumps({"cores": c, "run": request["run"], **result}), flush=True)
    return out


def ratio(a, b, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}x" if a and b else "-"


def check_cell(runs: list[dict]) -> str:
    if any("error" in r for r in runs):
        return "-"
    ticks = {r["ticks_checked"] for r in runs}
    if ticks != {0}:
        return f"equal ({min(ticks)} ticks)" if len(ticks) == 1 else f"equal ({'/'.join(map(str, sorted(ticks)))} ticks)"
    if all(r.get("final_checked") for r in runs):
        return "equal (after the last tick)"
    return "not checked"


def table(args, configs, refusals, engine_runs, paced_runs, sss_runs) -> str:
    one, two = configs[0], configs[-1]
    c1, c2 = f"{one} core{'s' if one > 1 else ''}", f"{two} cores"
    lines = [f"| query | engine events/s, {c1} | {c2} | {two}/{one} | tick ms p50 / p99, {c2} |"
             f" at the paced rate ({c2}): events/s, tick ms p50 / p99 | peak RSS growth MiB, {c1} / {c2} |"
             f" DuckDB | SSS events/s, {c1} | {c2} | {two}/{one} | engine / SSS, {c1} | {c2} |"
             " Feldera / Flink per core (published) |",
             "|" + "---|" * 14]
    notes = {"ours": [], "engine": [], "sss": []}
    for q in args.queries:
        feldera, flink = PUBLISHED_16_CORES.get(q, (None, None))
        published = f"{per_core(feldera)} / {per_core(flink)}"
        if refusals[q] is not None:
            notes["ours"].append(f"- {q}: `{refusals[q]}`")
            lines.append(f"| {q} | does not compile |" + " - |" * 11 + f" {published} |")
            continue
        r = {c: engine_runs.get(c, {}).get(q, {}) for c in configs}
        s = {c: sss_runs.get(c, {}).get(q, {}) for c in configs}
        e = {c: r[c].get("events_per_s") for c in configs}
        for c in configs:
            if "error" in r[c]:
                notes["engine"].append(f"- {q} ({c} core{'s' if c > 1 else ''}): {r[c]['error']}")
        eng = {c: f"{e[c]:,}" if e[c] else "failed" for c in configs}
        lat = f"{r[two]['tick_ms_p50']} / {r[two]['tick_ms_p99']}" if e[two] else "-"
        p = paced_runs.get(two, {}).get(q)
        paced = f"{p['rate']:,}: {p['tick_ms_p50']} / {p['tick_ms_p99']}" if p and "tick_ms_p50" in p else "-"
        mem = " / ".join(str(r[c].get("peak_rss_growth_mib", "-")) for c in (one, two))
        check = check_cell([r[c] for c in configs])
        ss = {c: s[c].get("events_per_s") for c in configs}
        if not s[two]:
            sss_cells = ["-", "-", "-", "-", "-"]
        elif ss[two] or ss[one]:
            def cell(c):
                if not ss[c]:
                    return "failed"
                wrong = "" if s[c].get("matches_duckdb", True) else f", differs from DuckDB: {s[c].get('check')}"
                return f"{ss[c]:,} ({s[c]['mode']}{wrong})"
            sss_cells = [cell(one), cell(two), ratio(ss[two], ss[one]), ratio(e[one], ss[one], 1), ratio(e[two], ss[two], 1)]
        else:
            classes = s[two].get("error_classes", {})
            notes["sss"].append(f"- {q}: " + "; ".join(
                f"{m} mode `{classes.get(m, '?')}`: {err[:160]}" for m, err in s[two].get("refused", {}).items()))
            refused = "refused: " + ", ".join(f"{m} `{classes.get(m, '?')}`" for m in s[two].get("refused", {}))
            sss_cells = [refused, "refused", "-", "-", "-"]
        lines.append(f"| {q} | {eng[one]} | {eng[two]} | {ratio(e[two], e[one])} | {lat} | {paced} | {mem} | {check} | "
                     + " | ".join(sss_cells) + f" | {published} |")
    for title, key in (("Refused by our compiler (line:column in the query's file)", "ours"),
                       ("Compiled but failed or wrong in the engine", "engine"),
                       ("Refused by Structured Streaming (error class and the start of its message, per output mode)",
                        "sss")):
        if notes[key]:
            lines.append(f"\n{title}:\n" + "\n".join(notes[key]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=5_000, help="events per tick (and per micro-batch)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", nargs="+", default=QUERIES)
    parser.add_argument("--cores", nargs="+", type=int, default=[1, 2],
                        help="core configurations: a child process per count, pinned with taskset, Spark local[N]")
    parser.add_argument("--no-sss", action="store_true", help="skip Spark Structured Streaming")
    parser.add_argument("--no-check", action="store_true",
                        help="check against DuckDB once after the last tick, not after every tick")
    parser.add_argument("--paced", type=float, default=0.5,
                        help="then run each query again (on the most cores), unchecked, with the input paced at this "
                             "fraction of its measured events/s, for tick latency at a fixed rate (0: skip)")
    args = parser.parse_args()
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    unknown = [q for q in args.queries if q not in QUERIES]
    if unknown:
        parser.error(f"--queries: unknown {', '.join(unknown)} (known: q0 ... q22)")
    configs = sorted(set(args.cores))
    for c in configs:
        core_configs.cpu_list(c)  # a clear error before anything starts

    load_before = uptime()
    print(json.dumps({"uptime_before": load_before}), flush=True)
    refusals = {q: refusal(q) for q in args.queries}
    for q in args.queries:
        print(json.dumps({"query": q, "compiles": refusals[q] is None, "refusal": refusals[q]}), flush=True)
    compiled = [q for q in args.queries if refusals[q] is None]

    check = "end" if args.no_check else "tick"
    workers = {}
    try:
        for c in configs:
            argv = core_configs.worker_argv(c, args.events, args.batch, args.seed, check, not args.no_sss)
            workers[c] = core_configs.Worker.start(c, argv, core_configs.worker_env(c))
            print(json.dumps({"cores": c, "argv": argv, **workers[c].ready}), flush=True)
        engine_runs = measure(workers, [{"run": "engine", "query": q} for q in compiled])
        paced_runs = {}
        if args.paced:
            most = configs[-1]
            paced_runs = measure({most: workers[most]}, [
                {"run": "paced", "query": q, "rate": args.paced * engine_runs[most][q]["events_per_s"]}
                for q in compiled if engine_runs[most][q].get("events_per_s")])
            for q, p in paced_runs[most].items():
                if "rate" in p:
                    p["rate"] = round(p["rate"])
        sss_runs = {}
        if not args.no_sss:
            sss_runs = measure(workers, [{"run": "sss", "query": q} for q in compiled if q in streaming.SPARK_SQL])
    finally:
        for w in workers.values():
            w.close()
    load_after = uptime()
    print(f"\nbefore: {load_before}\nafter:  {load_after}")
    print(f"events: {args.events:,} in ticks of {args.batch:,}, seed {args.seed}; "
          + "; ".join(f"{c} core{'s' if c > 1 else ''}: {w.ready['master']}, Python on CPUs {w.ready['python_cpus']}, "
                      f"JVM on CPUs {w.ready['jvm_cpus']}" for c, w in workers.items()))
    print()
    print(table(args, configs, refusals, engine_runs, paced_runs, sss_runs))


if __name__ == "__main__":
    main()
