"""Bounds on what one user can make the engine do: the size and nesting of a circuit
document and of an expression (so validating one stays fast and no parser recurses
without bound), and the values a tick may compute. Anything beyond a bound is refused
with a problem naming the bound (validation) or fails the tick naming the node (run
time); docs/circuit-format.md lists them.

The document and expression checks here are iterative and run before anything
recursive (the document loader, sqlglot's parser, the expression compilers) sees the
input.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from .errors import Problem, TickTooLarge

# ---- documents ------------------------------------------------------------------------
MAX_DOCUMENT_CHARS = 2_000_000  # the document's JSON size, about (strings, keys, numbers)
MAX_JSON_DEPTH = 64  # objects and arrays nested in the document
MAX_NODES = 2_000  # in the whole document, subcircuits' nodes included
MAX_EDGES = 8_000  # likewise
MAX_FIXEDPOINT_NESTING = 8  # fixed points inside fixed points
#: rules, declarations and directives of a Datalog program; tables and views of a SQL
#: script (each makes at least one node, so a text beyond it cannot compile within
#: MAX_NODES: it is refused while parsing, at the statement that passes it)
MAX_STATEMENTS = MAX_NODES

# ---- expressions ----------------------------------------------------------------------
MAX_EXPRESSION_CHARS = 10_000
#: parentheses, function calls, CASE ... END and NOT nested in one expression (sqlglot
#: spends about 20 stack frames per level: 48 levels overflowed Python's stack)
MAX_EXPRESSION_NESTING = 24
#: operators on a path of the parsed expression tree (`a + b + c` is 2 deep)
MAX_EXPRESSION_DEPTH = 200

# ---- values a tick computes -----------------------------------------------------------
MAX_STRING_CHARS = 1_000_000  # one computed string value (concat, replace, lpad, ...)
MAX_ROUND_DIGITS = 30  # round(x, d): places after the point (a double has ~17 significant digits)
#: rows one node may build in one tick (a join's or product's output, checked from key
#: counts before it is built; any node's output, checked after). The issue-31 product
#: e(a),e(b),e(c),e(d) of 60 facts (13M rows) took a worker from 340 MB to 4.4 GB,
#: about 330 bytes a row: 5M rows is about 1.7 GB at worst. The benches' biggest ticks
#: (10^5-row loads, 10^6-row joins) stay well under it. A runtime's `max_rows` (the web
#: app: DBSPWEB_TICK_MAX_ROWS) overrides it; None switches it off.
TICK_MAX_ROWS = 5_000_000
#: bytes one node may build in one tick, beside the row limit: it bounds wide rows (the
#: row limit alone lets 5M rows of 100 strings through). Counted as the output's Arrow
#: size: the table's own `nbytes` where the output is an Arrow table (the Spark
#: backend's driver-side paths, after the node), else rows × the schema's row width
#: (`row_bytes`: before a join, product or flat map is built, on all-Spark, and on the
#: reference evaluator, whose Python rows take several times that). 2 GiB; a runtime's
#: `max_bytes` (the web app: DBSPWEB_TICK_MAX_BYTES) overrides it; None switches it off.
TICK_MAX_BYTES = 2 * 1024 ** 3
#: the width assumed for a value of each type (Arrow's: 8-byte numbers, 4-byte dates and
#: offsets; a string or list of unknown length at 4 + STRING_BYTES) and for the weight
TYPE_BYTES = {"bigint": 8, "double": 8, "boolean": 1, "date": 4, "timestamp": 8}
STRING_BYTES = 32
WEIGHT_BYTES = 8

_tick_max_rows: ContextVar[int | None] = ContextVar("tick_max_rows", default=TICK_MAX_ROWS)
_tick_max_bytes: ContextVar[int | None] = ContextVar("tick_max_bytes", default=TICK_MAX_BYTES)


@contextmanager
def tick_rows(limit: int | None, max_bytes: int | None = TICK_MAX_BYTES):
    """The row (and byte) limits for the operators evaluated inside (a runtime's step
    sets them)."""
    token, bytes_token = _tick_max_rows.set(limit), _tick_max_bytes.set(max_bytes)
    try:
        yield
    finally:
        _tick_max_rows.reset(token)
        _tick_max_bytes.reset(bytes_token)


def row_bytes(schema) -> int:
    """The bytes a row of `schema` is counted at (its weight included): TYPE_BYTES."""
    return WEIGHT_BYTES + sum(TYPE_BYTES.get(c.type, 4 + STRING_BYTES) for c in schema.columns)


def tick_max_rows(schema=None) -> int | None:
    """The row limit in force (None: none); with `schema`, the rows of it the byte limit
    lets through too, whichever is fewer (a cheap bound checked before counting keys)."""
    limit, max_bytes = _tick_max_rows.get(), _tick_max_bytes.get()
    if schema is None or max_bytes is None:
        return limit
    by_bytes = max_bytes // row_bytes(schema)
    return by_bytes if limit is None else min(limit, by_bytes)


def check_tick_rows(node_id: str, kind: str, rows: int, built: bool = False, schema=None,
                    nbytes: int | None = None) -> None:
    """Raise TickTooLarge when `rows` (a node's output, or what it would build) passes
    the tick's row limit, or its size passes the byte limit: `nbytes` when measured
    (an Arrow table's), else `rows` × row_bytes(schema) when the schema is given."""
    limit = _tick_max_rows.get()
    if limit is not None and rows > limit:
        raise TickTooLarge(node_id, kind, rows, limit, built)
    max_bytes = _tick_max_bytes.get()
    if max_bytes is None or (nbytes is None and schema is None):
        return
    measured = nbytes is not None
    size = nbytes if measured else rows * row_bytes(schema)
    if size > max_bytes:
        raise TickTooLarge(node_id, kind, rows, limit, built, nbytes=size, max_bytes=max_bytes, measured=measured)


def _too_big(what: str, limit_name: str, limit: int, **where) -> Problem:
    return Problem(f"{what} (limit {limit_name} = {limit})", **where)


def too_many_statements(kind: str) -> str:
    """The message for the statement that passes MAX_STATEMENTS (`kind`: "rules and
    declarations", "statements")."""
    return (f"more than {MAX_STATEMENTS} {kind}: this is number {MAX_STATEMENTS + 1} "
            f"(limit MAX_STATEMENTS = {MAX_STATEMENTS}; each makes at least one node)")


def too_many_nodes() -> str:
    """The message for the part of a program whose nodes pass MAX_NODES."""
    return f"the circuit passes {MAX_NODES} nodes here (limit MAX_NODES = {MAX_NODES})"


def document_problems(data) -> list[Problem]:
    """The bounds a circuit document (a JSON value) exceeds, found by one iterative walk
    that stops at the first excess: nothing recursive has to look at it first."""
    chars = nodes = edges = 0
    # (value, JSON depth, fixed-point nesting, is a circuit {nodes, edges}, node id)
    stack = [(data, 1, 0, True, None)]
    while stack:
        value, depth, nesting, is_circuit, node_id = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return [_too_big(f"the document nests objects and arrays more than {MAX_JSON_DEPTH} deep",
                             "MAX_JSON_DEPTH", MAX_JSON_DEPTH, node=node_id)]
        if isinstance(value, dict):
            chars += 2 + 4 * len(value)
            if is_circuit:
                if isinstance(value.get("nodes"), list):
                    nodes += len(value["nodes"])
                if isinstance(value.get("edges"), list):
                    edges += len(value["edges"])
                if nodes > MAX_NODES:
                    return [_too_big(f"the document has more than {MAX_NODES} nodes (subcircuits included)", "MAX_NODES", MAX_NODES)]
                if edges > MAX_EDGES:
                    return [_too_big(f"the document has more than {MAX_EDGES} edges (subcircuits included)", "MAX_EDGES", MAX_EDGES)]
            for key, item in value.items():
                chars += len(key) if isinstance(key, str) else 8
                inner_id = node_id
                if is_circuit and key == "nodes" and isinstance(item, list):
                    for node in item:  # a node: remember its id for the problems inside it
                        own = node.get("id") if isinstance(node, dict) and isinstance(node.get("id"), str) else node_id
                        stack.append((node, depth + 2, nesting, False, own))
                    chars += 2
                    continue
                if key == "subcircuit" and not is_circuit:
                    if nesting + 1 > MAX_FIXEDPOINT_NESTING:
                        return [_too_big(f"node {node_id!r}: fixed points are nested more than {MAX_FIXEDPOINT_NESTING} deep",
                                         "MAX_FIXEDPOINT_NESTING", MAX_FIXEDPOINT_NESTING, node=node_id, param="subcircuit")]
                    stack.append((item, depth + 1, nesting + 1, True, inner_id))
                    continue
                stack.append((item, depth + 1, nesting, False, inner_id))
        elif isinstance(value, (list, tuple)):
            chars += 2 + len(value)
            stack.extend((item, depth + 1, nesting, False, node_id) for item in value)
        elif isinstance(value, str):
            chars += len(value) + 2
        else:
            chars += 8
        if chars > MAX_DOCUMENT_CHARS:
            return [_too_big(f"the document is larger than {MAX_DOCUMENT_CHARS:,} characters", "MAX_DOCUMENT_CHARS", MAX_DOCUMENT_CHARS)]
    return []


def expression_nesting_problem(text: str) -> tuple[str, int] | None:
    """(message, position) when `text` nests parentheses, function calls, CASE or runs
    of NOT / unary signs deeper than MAX_EXPRESSION_NESTING; found with sqlglot's
    tokenizer (a loop, no recursion) before its parser runs."""
    from sqlglot.tokens import Tokenizer, TokenType

    try:
        tokens = Tokenizer().tokenize(text)
    except Exception:  # a tokenizer error: the parser reports it with its position
        return None
    depth = run = 0  # run: consecutive NOT / - / + tokens (each a level of the parser)
    for token in tokens:
        kind = token.token_type
        run = run + 1 if kind in (TokenType.NOT, TokenType.DASH, TokenType.PLUS) else 0
        if kind in (TokenType.L_PAREN, TokenType.CASE):
            depth += 1
        elif kind in (TokenType.R_PAREN, TokenType.END):
            depth -= 1
        if depth + run > MAX_EXPRESSION_NESTING:
            return (f"the expression nests parentheses, function calls, CASE or NOT more than {MAX_EXPRESSION_NESTING} "
                    f"deep (limit MAX_EXPRESSION_NESTING = {MAX_EXPRESSION_NESTING})"), token.start
    return None


def tree_depth(root, children) -> int:
    """The depth of a tree, without recursion (children(node) -> its child nodes)."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= MAX_EXPRESSION_DEPTH:
            stack.extend((child, depth + 1) for child in children(node))
    return deepest
