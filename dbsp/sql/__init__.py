"""SQL views -> circuits, and circuits -> SQL (docs/sql.md).

`compile_sql(text)` reads CREATE TABLE / CREATE VIEW statements (parsed by sqlglot,
then compiled through a whitelist) into a circuit document whose nodes each carry
`source`, the span of SQL they came from. `export_sql(document)` writes the SQL of a
circuit SQL can express, or raises NotExpressible naming the node that it cannot.
"""
from .compiler import compile_sql
from .errors import NotExpressible, Span, SqlError, SqlProblem, SqlTooBig
from .export import export_sql

__all__ = ["NotExpressible", "Span", "SqlError", "SqlProblem", "SqlTooBig", "compile_sql", "export_sql"]
