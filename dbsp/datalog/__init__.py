"""Datalog programs become circuits.

    from dbsp.datalog import compile_program
    document = compile_program(text)                     # a circuit document (dict)
    document = compile_program(text, {"edge": [{"name": "src", "type": "bigint"}, ...]})

Soufflé-style rules with variables, constants, negation (`!` / `not`), comparisons and
arithmetic; input relations typed by `.decl` or by the schemas pushed to them. Each
recursive stratum becomes a `fixedpoint`, negation an antijoin against a lower stratum.
The language and the translation: docs/datalog.md. Problems: `DatalogInvalid`, each
with the line:column of the rule at fault.
"""
from __future__ import annotations

from .check import check_program
from .compile import compile_checked
from .errors import DatalogInvalid, DatalogTooBig, SourceProblem
from .syntax import parse_program


def compile_program(text: str, schemas: dict[str, list[dict]] | None = None) -> dict:
    """A Datalog program -> a circuit document; raise DatalogInvalid listing every problem.
    `schemas` types input relations without a `.decl` (relation -> list of columns)."""
    return compile_checked(check_program(parse_program(text), schemas))


_JSON_TYPES = ((bool, "boolean"), (int, "bigint"), (float, "double"), (str, "string"))


def schemas_from_pushes(ticks: list[dict]) -> dict[str, list[dict]]:
    """Input schemas inferred from pushes ({input: [change records]} per tick): the
    columns of each input's first row, in its order, typed by their first non-null
    JSON value (integer bigint, number double, string, boolean)."""
    rows: dict[str, list[dict]] = {}
    for tick in ticks:
        for name, records in tick.items():
            for rec in records if isinstance(records, list) else []:
                row = rec.get("insert", rec.get("delete", rec.get("data"))) if isinstance(rec, dict) else None
                if isinstance(row, dict):
                    rows.setdefault(name, []).append(row)
    schemas = {}
    for name, found in rows.items():
        columns = []
        for col in found[0]:
            value = next((r[col] for r in found if r.get(col) is not None), None)
            kind = next((t for py, t in _JSON_TYPES if isinstance(value, py)), "string")
            columns.append({"name": col, "type": kind, "nullable": False})
        schemas[name] = columns
    return schemas


__all__ = ["DatalogInvalid", "DatalogTooBig", "SourceProblem", "compile_program", "parse_program", "schemas_from_pushes"]
