"""dbsp: DBSP circuits (incremental view maintenance over Z-set change streams) on Spark.

A plain Python package with no Django import. Layout, after Feldera's `dbsp` crate:
- `types`      column types and schemas, coercion of JSON values
- `zset`       the algebra: Z-sets (row -> integer weight), consolidation
- `document`   the circuit document (JSON) -> nodes, ports, edges
- `validate`   every problem of a document at once, each naming its node/port/parameter
- `expr`       the expression language: sqlglot parse -> whitelisted tree -> Spark / Python
- `operators`  one module per operator, each documenting its math
- `plan`       a validated circuit -> an executable incremental plan
- `runtime`    tick results (output deltas, frontier, stats) shared by both backends
- `reference`  the pure-Python evaluator (the oracle in tests)
- `spark`      the Spark backend (session, Z-sets as DataFrames)
"""
from .document import CircuitDocument, load_document
from .errors import CircuitInvalid, Problem, TickFailed
from .plan import Plan, compile_plan
from .runtime import TickResult
from .types import Column, Schema
from .validate import validate
from .zset import ZSet

__all__ = [
    "CircuitDocument",
    "CircuitInvalid",
    "Column",
    "Plan",
    "Problem",
    "Schema",
    "TickFailed",
    "TickResult",
    "ZSet",
    "compile_plan",
    "load_document",
    "validate",
]
