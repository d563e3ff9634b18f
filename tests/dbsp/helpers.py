"""Small builders for engine tests."""
from __future__ import annotations

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records


def schema(*cols):
    return [{"name": n, "type": t} for n, t in (c.split(":") for c in cols)]


def circuit(inputs: dict, nodes: list, edges: list) -> dict:
    """inputs: name -> schema; nodes: (id, kind, params); edges: "a.out->b.in" strings."""
    doc_nodes = [{"id": n, "kind": "input", "params": {"schema": s}} for n, s in inputs.items()]
    doc_nodes += [{"id": i, "kind": k, "params": p} for i, k, p in nodes]
    doc_edges = []
    for e in edges:
        src, dst = e.split("->")
        (sn, sp), (dn, dp) = src.split("."), dst.split(".")
        doc_edges.append({"from": {"node": sn, "port": sp}, "to": {"node": dn, "port": dp}})
    return {"nodes": doc_nodes, "edges": doc_edges}


#: The Spark runtime with every threshold at 0: each operator's tick runs as Spark jobs
#: (its expressions as Spark columns), never on the driver, whatever the sizes.
ALL_SPARK = {"driver_max_rows": 0, "arrow_max_rows": 0, "recent_max": 0, "vector_min_rows": 0}


def run(document, ticks, spark=None, **spark_options):
    """Run both backends; assert they agree; return the per-tick outputs as ZSets. The Spark
    runtime keeps its defaults unless `spark_options` say otherwise (small changes then
    run on the driver: pass **ALL_SPARK to evaluate on Spark)."""
    plan = compile_plan(document)
    runtimes = [ReferenceRuntime(plan)]
    if spark is not None:
        from dbsp.spark import SparkRuntime

        runtimes.append(SparkRuntime(plan, spark, **spark_options))
    results = []
    for tick in ticks:
        changes = {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}
        outs = [rt.step(changes).outputs for rt in runtimes]
        for other in outs[1:]:
            assert other == outs[0], f"Spark and reference differ at tick {len(results)}"
        results.append(outs[0])
    return results


def z(*rows):
    """z((row, weight), ...) or z(row, ...) with weight 1."""
    return ZSet(r if isinstance(r[1], int) and isinstance(r[0], tuple) else (r, 1) for r in rows)


def ins(**row):
    return {"insert": row}


def dele(**row):
    return {"delete": row}
