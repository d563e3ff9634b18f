"""A from-scratch Spark evaluation of a circuit's query: every view computed once from
whole input tables, as batch Spark jobs.

The other half of verification at scale (runs verify large states with it): it shares
no incremental machinery with the engine's tick path (no Δ forms, traces, driver or
Arrow paths): every operator is its plain Spark form (`Operator.spark`) on whole
DataFrames, a fixed point is iterated on whole values. Only for circuits whose query
does not depend on tick boundaries (no DBSP primitives, no event-time windows).
"""
from __future__ import annotations

from ..zset import ZSet
from .backend import SparkRuntime
from .incremental import Lifted


class BatchQuery(SparkRuntime):
    """Q over whole tables on Spark: one step from nothing, every node lifted."""

    def __init__(self, plan, session=None):
        # thresholds below zero: no change is ever small enough for the driver paths
        super().__init__(plan, session, driver_max_rows=-1, arrow_max_rows=-1, recent_max=0)

    def make_executor(self, node_id):
        op, schema = self.plan.operators[node_id], self.plan.schemas[node_id]
        if op.kind == "fixedpoint":
            from .fixedpoint import FixedPointRecompute

            return FixedPointRecompute(self, op, schema)
        return _Materialized(Lifted(self, op, schema))


class _Materialized:
    """A node's whole value computed once (checkpointed on the executors), so that the
    views sharing it do not compute it again and lineage stays short."""

    def __init__(self, executor):
        self.executor = executor

    def step(self, inputs):
        out = self.executor.step(inputs)
        if out is not None and out._df is not None and out._table is None:
            out.ctx.jobs += 1
            out._df = out._df.localCheckpoint(eager=True)
        return out

    def state_rows(self) -> int:
        return 0


def recompute_on_spark(plan, tables: dict[str, ZSet], session=None) -> dict[str, list[dict]]:
    """view -> its full contents as JSON records, computed on Spark from whole tables."""
    runtime = BatchQuery(plan, session)
    try:
        return runtime.step({name: z for name, z in tables.items() if z}).outputs_json()
    finally:
        runtime.close()
