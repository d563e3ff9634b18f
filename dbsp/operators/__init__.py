"""The operator registry: every kind a circuit document may name, one module each."""
from .aggregate import Aggregate
from .asof_join import AsofJoin
from .base import Operator
from .difference import Difference
from .distinct import Distinct
from .filter import Filter
from .fixedpoint import Delta0, Export, FixedPoint, Import
from .flat_map import FlatMap
from .input import Input
from .join import Join
from .map import Map
from .output import Output
from .primitives import Delay, Differentiate, Integrate
from .semijoin import AntiJoin, LeftJoin, SemiJoin
from .top_k import TopK
from .union import Union
from .window import SessionWindow, SlidingWindow, TumblingWindow
from .window_aggregate import WindowAggregate

OPERATORS: dict[str, type[Operator]] = {
    op.kind: op
    for op in (Input, Output, Filter, Map, FlatMap, Union, Difference, Distinct, Join, SemiJoin, AntiJoin, LeftJoin, AsofJoin,
               Aggregate, TopK, WindowAggregate, Delay, Integrate, Differentiate, FixedPoint, Import, Delta0, Export,
               TumblingWindow, SlidingWindow, SessionWindow)
}

__all__ = ["OPERATORS", "Operator"]
