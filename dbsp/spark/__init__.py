"""The Spark backend: Z-sets as DataFrames (data columns + integer weight `__w`)."""
from .backend import SparkRuntime
from .session import SparkConfig, get_session

__all__ = ["SparkConfig", "SparkRuntime", "get_session"]
