"""The pure-Python reference evaluator: Z-sets in memory, no Spark. The oracle in tests.

`ReferenceRuntime` evaluates the same plan tick by tick on Python Z-sets;
`recompute(plan, tables)` evaluates the non-incremental query over whole tables, so
tests can check I(incremental output) == recompute(I(inputs)) at every tick.
"""
from __future__ import annotations

from .plan import Plan
from .runtime import Runtime
from .zset import ZSet


class ReferenceRuntime(Runtime):
    def from_zset(self, node_id, z):
        return z

    def evaluate(self, node_id, delta):
        return self.plan.operators[node_id].reference(delta)

    def collect(self, value):
        return value


def recompute(plan: Plan, tables: dict[str, ZSet]) -> dict[str, ZSet]:
    """Evaluate the query from scratch over whole tables: view -> its full contents."""
    result = ReferenceRuntime(plan).step({k: v for k, v in tables.items() if v})
    return result.outputs
