"""Benchmark: how compiling a Datalog program or a SQL script grows with its size
(issue 31, finding 3: 10,000 rules took 36.7 s before the 400 on MAX_NODES).

For each shape and size N (all within MAX_STATEMENTS and MAX_NODES, so the whole work
is done), the text is compiled `--repeat` times (the median kept) and the time per
statement reported, with its ratio to the smallest size's: about 1 when compiling is
linear, about N/N0 when quadratic. Every compiled document is cross-checked against the
node count the shape implies (recomputed from N, not read from the compiler), and
validated by the engine. The machine's load average (1 min) is recorded before and after.

Shapes:
- datalog-relations: N rules `r{i}(x) :- e(x), x > i.`, each its own relation (one
  stratum each): the strata and types of the checker.
- datalog-one-relation: N rules of one relation `r(x) :- e(x), x > i.`: a union chain N
  deep (ids, layout).
- sql-views: N views `CREATE VIEW v{i} AS SELECT x FROM e WHERE x > i;`.
- sql-chain: N local views each reading the one before, and a last view: a chain N deep.
- datalog-check: parsing and checking only, N rules each its own relation, with
  MAX_STATEMENTS lifted in-process (the checker's strata were quadratic: most of the
  issue's 36.7 s).
- refused: the issue's 10,000-rule program (179 KB), refused at rule 2001: the time to
  the 400.

Run: .venv/bin/python -m bench.compile [--sizes 250 500 1000] [--repeat 3]
Prints one JSON object per measurement and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from dbsp.datalog import DatalogTooBig, compile_program, parse_program
from dbsp.datalog import syntax
from dbsp.datalog.check import Checked, check_program
from dbsp.limits import MAX_STATEMENTS
from dbsp.sql import SqlTooBig, compile_sql
from dbsp.validate import validate


def _datalog_relations(n):
    text = ".decl e(x: number)\n" + "\n".join(f"r{i}(x) :- e(x), x > {i}." for i in range(n))
    # input e, e_facts; per rule: filter, r_set, output
    return compile_program, text, 2 + 3 * n


def _datalog_one_relation(n):
    text = ".decl e(x: number)\n" + "\n".join(f"r(x) :- e(x), x > {i}." for i in range(n))
    # input, e_facts; per rule a filter; n - 1 unions; r_set; output
    return compile_program, text, 2 + n + (n - 1) + 2


def _sql_views(n):
    text = "CREATE TABLE e (x BIGINT NOT NULL);\n" + "\n".join(f"CREATE VIEW v{i} AS SELECT x FROM e WHERE x > {i};" for i in range(n))
    return compile_sql, text, 1 + 2 * n  # input; per view a filter and an output


def _sql_chain(n):
    lines = ["CREATE TABLE e (x BIGINT NOT NULL);", "CREATE LOCAL VIEW v0 AS SELECT x FROM e WHERE x > 0;"]
    lines += [f"CREATE LOCAL VIEW v{i} AS SELECT x FROM v{i - 1} WHERE x > {i};" for i in range(1, n - 1)]
    lines.append(f"CREATE VIEW last AS SELECT x FROM v{n - 2};")
    return compile_sql, "\n".join(lines), 1 + (n - 1) + 1  # input; a filter per local view; the output


def _datalog_check(n):
    """Parsing and checking only (strata, safety, types) of N rules, each its own relation,
    with MAX_STATEMENTS lifted in this process (see main): how the checker itself grows,
    up to the issue's 10,000 rules."""
    text = ".decl e(x: number)\n" + "\n".join(f"r{i}(x) :- e(x), x > {i}." for i in range(n))
    return (lambda t: check_program(parse_program(t))), text, n  # one stratum per rule


SHAPES = {"datalog-relations": _datalog_relations, "datalog-one-relation": _datalog_one_relation,
          "sql-views": _sql_views, "sql-chain": _sql_chain, "datalog-check": _datalog_check}


def _nodes(document) -> int:
    count, stack = 0, list(document["nodes"])
    while stack:
        node = stack.pop()
        count += 1
        stack.extend((node.get("subcircuit") or {}).get("nodes", []))
    return count


def measure(shape: str, n: int, repeat: int) -> dict:
    compile_, text, expected = SHAPES[shape](n)
    times, document = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        document = compile_(text)
        times.append(time.perf_counter() - start)
    if isinstance(document, Checked):
        nodes = len(document.strata)
        assert nodes == expected and not any(s.recursive for s in document.strata), f"{shape} N={n}: {nodes} strata"
    else:
        nodes = _nodes(document)
        assert nodes == expected, f"{shape} N={n}: {nodes} nodes, the shape implies {expected}"
        assert validate(document) == [], f"{shape} N={n}: the engine refuses the document"
    seconds = statistics.median(times)
    return {"shape": shape, "n": n, "chars": len(text), "nodes": nodes, "seconds": round(seconds, 3),
            "ms_per_statement": round(1000 * seconds / n, 3)}


def refused(repeat: int) -> dict:
    text = "\n".join(f"r{i}(x) :- e(x)." for i in range(10_000))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            compile_program(text)
        except DatalogTooBig as e:
            problem = e.problems[0]
            assert (problem.line, problem.column) == (2001, 1) and "MAX_STATEMENTS" in problem.message
        else:
            raise AssertionError("the 10,000-rule program compiled")
        times.append(time.perf_counter() - start)
    sql = "CREATE TABLE e (x BIGINT NOT NULL);\n" + "\n".join(f"CREATE VIEW v{i} AS SELECT x FROM e;" for i in range(5000))
    sql_times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            compile_sql(sql)
        except SqlTooBig as e:
            assert e.problems[0].span.line == 2001 and "MAX_STATEMENTS" in e.problems[0].message
        else:
            raise AssertionError("the 5,001-statement script compiled")
        sql_times.append(time.perf_counter() - start)
    return {"shape": "refused", "datalog_10000_rules_seconds": round(statistics.median(times), 3), "datalog_chars": len(text),
            "sql_5001_statements_seconds": round(statistics.median(sql_times), 3), "sql_chars": len(sql)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[80, 160, 320, 640])
    parser.add_argument("--check-sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000],
                        help="for datalog-check (MAX_STATEMENTS is lifted for it)")
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps({"load_before": os.getloadavg()[0]}), flush=True)
    rows = []
    for shape in args.shapes:
        first = None
        syntax.MAX_STATEMENTS = 10**9 if shape == "datalog-check" else MAX_STATEMENTS
        for n in (args.check_sizes if shape == "datalog-check" else args.sizes):
            row = measure(shape, n, args.repeat)
            first = first or row
            row["ratio_per_statement"] = round(row["ms_per_statement"] / first["ms_per_statement"], 2)
            print(json.dumps(row), flush=True)
            rows.append(row)
    syntax.MAX_STATEMENTS = MAX_STATEMENTS
    refusal = refused(args.repeat)
    print(json.dumps(refusal), flush=True)
    print(json.dumps({"load_after": os.getloadavg()[0]}), flush=True)
    print("\n| shape | N | nodes (strata for datalog-check) | seconds | ms / statement | ratio to the smallest N |\n|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['shape']} | {r['n']} | {r['nodes']} | {r['seconds']} | {r['ms_per_statement']} | {r['ratio_per_statement']} |")
    print(f"\nrefused: 10,000 Datalog rules in {refusal['datalog_10000_rules_seconds']} s, "
          f"5,001 SQL statements in {refusal['sql_5001_statements_seconds']} s")


if __name__ == "__main__":
    main()
