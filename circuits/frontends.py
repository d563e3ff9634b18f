"""Circuits from program text: SQL views (dbsp.sql) and Datalog programs (dbsp.datalog)
compiled to circuit documents, and a drawn circuit written back as SQL. Nothing is
saved: the editor shows the document, and saves it as a version like a drawn one.

Every problem has `message`; those in the text have `line` and `column` (1-based), and
those of a compiled node have `node` and the line:column of the node's `source` span.
"""
from __future__ import annotations

from django.conf import settings

from dbsp.datalog import DatalogInvalid, DatalogTooBig, compile_program
from dbsp.errors import CircuitInvalid
from dbsp.sql import NotExpressible, SqlError, SqlTooBig, compile_sql, export_sql

from .services import ServiceError, inspect_document, refuse_beyond_limits, refuse_expressions_beyond_limits


def require_source_text(text, language: str) -> str:
    """The `text` field of a compile request: a string within the size limit, else 400."""
    if not isinstance(text, str):
        raise ServiceError(f"`text` must be the {language} source as a string.", 400,
                           [{"field": "text", "message": "a string is required"}])
    limit = settings.MAX_SOURCE_CHARS
    if len(text) > limit:
        raise ServiceError(f"The {language} text is over the limit of {limit} characters (DBSPWEB_MAX_SOURCE_CHARS).", 400,
                           [{"field": "text", "message": f"{len(text)} characters, more than {limit}"}])
    if "\x00" in text:
        raise ServiceError(f"The {language} text contains a NUL character (\\u0000).", 400,
                           [{"field": "text", "message": "contains a NUL character (\\u0000)"}])
    return text


TOO_DEEP = ("the {language} nests too deeply to compile (an expression of thousands of nested parts); "
            "split it, e.g. into several views or rules")


def compile_sql_text(text: str) -> dict:
    """The compiled document, or the problems; a script beyond a bound of dbsp/limits.py
    (statements, nodes) is refused with ServiceError (400) naming the bound and the
    line:column of the statement that passes it."""
    try:
        document = compile_sql(text)
    except SqlTooBig as e:
        raise _too_big("SQL script", [p.as_dict() for p in e.problems]) from None
    except SqlError as e:
        return _refused([p.as_dict() for p in e.problems])
    except RecursionError:  # sqlglot parses and walks expressions recursively
        return _refused([{"message": TOO_DEEP.format(language="SQL")}])
    return _compiled(document)


def compile_datalog_text(text: str, schemas: dict | None = None) -> dict:
    """As compile_sql_text, for a Datalog program (refused at the rule or declaration
    that passes a bound)."""
    try:
        document = compile_program(text, schemas)
    except DatalogTooBig as e:
        raise _too_big("Datalog program", [p.as_dict() for p in e.problems]) from None
    except DatalogInvalid as e:
        return _refused([p.as_dict() for p in e.problems])
    except RecursionError:
        return _refused([{"message": TOO_DEEP.format(language="Datalog")}])
    return _compiled(document)


def _too_big(what: str, problems: list[dict]) -> ServiceError:
    first = problems[0]
    at = f" at line {first['line']}:{first['column']}" if "line" in first else ""
    return ServiceError(f"The {what} is refused{at}: {first['message']}.", 400, problems)


def _refused(problems: list[dict]) -> dict:
    return {"valid": False, "document": None, "errors": problems, "schemas": {}}


def _compiled(document: dict) -> dict:
    """The document and the engine's own problems with it, each placed at the source
    span of the node it names (a front end should not make any; if it does, the user
    sees where)."""
    inspected = inspect_document(document)
    spans = {}
    _collect_spans(document.get("nodes", []), spans)
    for problem in inspected["errors"]:
        where = source_position(spans.get(problem.get("node")))
        if where:
            problem.setdefault("line", where[0])
            problem.setdefault("column", where[1])
    return {"document": document} | inspected


def _collect_spans(nodes: list, spans: dict) -> None:
    for node in nodes:
        spans[node.get("id")] = node.get("source")
        _collect_spans((node.get("subcircuit") or {}).get("nodes", []), spans)


def source_position(span) -> tuple[int, int] | None:
    """(line, column) where a node's `source` starts: SQL's {start: {line, column}, end}
    or Datalog's {line, column, end_line, end_column}."""
    if not isinstance(span, dict):
        return None
    start = span.get("start", span)
    if isinstance(start, dict) and isinstance(start.get("line"), int) and isinstance(start.get("column"), int):
        return start["line"], start["column"]
    return None


def export_sql_text(document) -> dict:
    """{"sql": text} for a circuit SQL can express; else {"sql": None, "errors": [...]}
    naming the node (NotExpressible) or the document's problems. A document beyond a
    bound of dbsp/limits.py is refused (ServiceError, 400) before it is read."""
    refuse_beyond_limits(document)
    try:
        return {"sql": export_sql(document), "errors": []}
    except NotExpressible as e:
        return {"sql": None, "errors": [{"node": e.node, "message": str(e)}]}
    except CircuitInvalid as e:
        problems = [p.as_dict() for p in e.problems]
        refuse_expressions_beyond_limits(problems)
        return {"sql": None, "errors": problems}


def compiled_source(language: str, text: str) -> dict:
    """The document of a SQL or Datalog text that compiles (ValueError listing the problems
    if not), keeping the text in `metadata.source` so the editor can show it again."""
    result = compile_sql_text(text) if language == "sql" else compile_datalog_text(text)
    if result["document"] is None or not result["valid"]:
        raise ValueError("; ".join(f"{p.get('line', '?')}:{p.get('column', '?')}: {p['message']}" for p in result["errors"]))
    return result["document"] | {"metadata": {"source": {"language": language, "text": text}}}
