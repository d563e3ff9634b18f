"""The operator registry: every kind a circuit document may name, one module each."""
from .base import Operator
from .filter import Filter
from .input import Input
from .output import Output

OPERATORS: dict[str, type[Operator]] = {op.kind: op for op in (Input, Filter, Output)}

__all__ = ["OPERATORS", "Operator"]
