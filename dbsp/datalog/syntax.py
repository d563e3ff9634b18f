"""Datalog source text -> a program tree with source spans (line:column).

Parsed by lark (LALR) from the grammar beside this file (`datalog.lark`): Soufflé's
surface syntax for declarations, rules, negation and arithmetic. Variables are
identifiers in argument positions, relations identifiers before `(`; `_` is the
anonymous variable. Nothing here knows circuits: dbsp/datalog/check.py gives the tree
its meaning and dbsp/datalog/compile.py turns it into a circuit document.
"""
from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from .. import budget
from ..limits import MAX_STATEMENTS, too_many_statements
from .errors import DatalogInvalid, DatalogTooBig, SourceProblem

TYPES = {  # Soufflé's names and the circuit format's
    "number": "bigint", "unsigned": "bigint", "bigint": "bigint", "float": "double", "double": "double",
    "symbol": "string", "string": "string", "boolean": "boolean", "date": "date", "timestamp": "timestamp",
}


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"

    def as_dict(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "end_column": self.end_column}


# ---- terms and expressions --------------------------------------------------------------
@dataclass(frozen=True)
class Var:
    name: str  # "_" is the anonymous variable
    span: Span


@dataclass(frozen=True)
class Const:
    value: object  # int, float, str or bool
    span: Span


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * / %
    left: object
    right: object
    span: Span


@dataclass(frozen=True)
class Neg:
    operand: object
    span: Span


# ---- literals, rules, declarations --------------------------------------------------------
@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple
    span: Span
    negated: bool = False


@dataclass(frozen=True)
class Comparison:
    op: str  # = != < <= > >=
    left: object
    right: object
    span: Span


@dataclass
class Rule:
    index: int  # 1-based, in source order
    head: Atom
    body: list
    span: Span
    text: str = ""

    def where(self) -> str:
        return f"rule {self.index} ({self.head.relation}, line {self.span})"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    span: Span


@dataclass
class Decl:
    relation: str
    columns: list[Column]
    span: Span


@dataclass
class Program:
    decls: dict[str, Decl] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    inputs: dict[str, Span] = field(default_factory=dict)   # .input directives
    outputs: dict[str, Span] = field(default_factory=dict)  # .output directives


def variables(term) -> list[Var]:
    """The variables of a term or comparison side, left to right (`_` included)."""
    if isinstance(term, Var):
        return [term]
    if isinstance(term, BinOp):
        return variables(term.left) + variables(term.right)
    if isinstance(term, Neg):
        return variables(term.operand)
    if isinstance(term, Comparison):
        return variables(term.left) + variables(term.right)
    if isinstance(term, Atom):
        return [v for a in term.args for v in variables(a)]
    return []


def _span(meta_or_token) -> Span:
    m = meta_or_token
    if isinstance(m, Token):
        return Span(m.line, m.column, m.end_line, m.end_column)
    return Span(m.line, m.column, m.end_line, m.end_column)


_STATEMENTS: ContextVar[list[int]] = ContextVar("datalog_statements")  # [statements parsed so far]


class _Counting(Transformer):
    """Runs inside the LALR parser as each statement is reduced (lark's embedded
    transformer): counts statements, refusing the one past MAX_STATEMENTS at its
    line:column before the rest is read, and keeps to the request's budget. The tree
    is kept as it is (the spans are taken from it afterwards)."""

    def _counted(self, name, children):
        first = next((c for c in children if isinstance(c, (Tree, Token))), None)
        meta = first if isinstance(first, Token) else getattr(first, "meta", None)
        line, column = getattr(meta, "line", None), getattr(meta, "column", None)
        count = _STATEMENTS.get()
        count[0] += 1
        if count[0] > MAX_STATEMENTS:
            raise DatalogTooBig([SourceProblem(f"the program has {too_many_statements('rules and declarations')}", line, column)])
        budget.check(f"statement {count[0]} (line {line}:{column})", line, column)
        return Tree(name, children)

    def rule(self, children):
        return self._counted("rule", children)

    def decl(self, children):
        return self._counted("decl", children)

    def input_dir(self, children):
        return self._counted("input_dir", children)

    def output_dir(self, children):
        return self._counted("output_dir", children)


_GRAMMAR = (Path(__file__).with_name("datalog.lark")).read_text()
_PARSER = Lark(_GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False, transformer=_Counting())


@v_args(meta=True)
class _ToProgram(Transformer):
    def __init__(self, text: str):
        super().__init__()
        self.text = text
        self.lines = text.split("\n")

    # terms
    def var(self, meta, children):
        return Var(str(children[0]), _span(meta))

    def anon(self, meta, children):
        return Var("_", _span(meta))

    def int_(self, meta, children):
        return Const(int(children[0]), _span(meta))

    def float_(self, meta, children):
        return Const(float(children[0]), _span(meta))

    def string(self, meta, children):
        raw = str(children[0])[1:-1]
        return Const(re.sub(r"\\(.)", r"\1", raw), _span(meta))  # \" and \\ escapes

    def true(self, meta, children):
        return Const(True, _span(meta))

    def false(self, meta, children):
        return Const(False, _span(meta))

    def neg(self, meta, children):
        return Neg(children[0], _span(meta))

    def binop(self, meta, children):
        left, op, right = children
        return BinOp(str(op), left, right, _span(meta))

    # literals
    def atom(self, meta, children):
        name, *args = children
        return Atom(str(name), tuple(args), _span(meta))

    def negated(self, meta, children):
        a = children[-1]
        return Atom(a.relation, a.args, _span(meta), negated=True)

    def comparison(self, meta, children):
        left, op, right = children
        return Comparison("!=" if str(op) == "<>" else str(op), left, right, _span(meta))

    def body(self, meta, children):
        return list(children)

    def rule(self, meta, children):
        head, body = children[0], (children[1] if len(children) > 1 else [])
        return Rule(0, head, body, _span(meta), self._text(meta))

    # declarations
    def column(self, meta, children):
        name, type_ = children
        return Column(str(name), str(type_), _span(meta))

    def decl(self, meta, children):
        name, *columns = children
        return Decl(str(name), list(columns), _span(meta))

    def input_dir(self, meta, children):
        return ("input", [(str(t), _span(t)) for t in children])

    def output_dir(self, meta, children):
        return ("output", [(str(t), _span(t)) for t in children])

    def start(self, meta, children):
        return children

    def _text(self, meta) -> str:
        if meta.line == meta.end_line:
            return self.lines[meta.line - 1][meta.column - 1:meta.end_column - 1]
        parts = [self.lines[meta.line - 1][meta.column - 1:]] + self.lines[meta.line:meta.end_line - 1]
        parts.append(self.lines[meta.end_line - 1][:meta.end_column - 1])
        return " ".join(p.strip() for p in parts)


def parse_program(text: str) -> Program:
    """Parse a program; DatalogInvalid names the line:column of a syntax error and of
    every problem a declaration has (unknown type, a relation declared twice)."""
    token = _STATEMENTS.set([0])
    try:
        tree = _PARSER.parse(text)
        items = _ToProgram(text).transform(tree)
    except UnexpectedInput as e:
        raise DatalogInvalid([SourceProblem(_syntax_message(e), e.line, e.column)]) from None
    except VisitError as e:  # a malformed literal (e.g. a number too long) inside the tree
        raise DatalogInvalid([SourceProblem(f"cannot read: {e.orig_exc}", None, None)]) from None
    finally:
        _STATEMENTS.reset(token)
    program, problems = Program(), []
    for item in items:
        if isinstance(item, Rule):
            item.index = len(program.rules) + 1
            program.rules.append(item)
        elif isinstance(item, Decl):
            if item.relation in program.decls:
                first = program.decls[item.relation].span
                problems.append(SourceProblem(f"relation {item.relation!r} is declared twice (first at line {first})", item.span.line, item.span.column))
                continue
            names = [c.name for c in item.columns]
            if len(item.relation) > 63:
                problems.append(SourceProblem(f".decl {item.relation[:20]}...: a relation name has at most 63 characters", item.span.line, item.span.column))
            for c in item.columns:
                if c.name.startswith("__") or len(c.name) > 63:
                    problems.append(SourceProblem(f".decl {item.relation}: column {c.name!r}: names start with a letter or one _ "
                                                  "and have at most 63 characters", c.span.line, c.span.column))
                if c.type not in TYPES:
                    problems.append(SourceProblem(f".decl {item.relation}: unknown type {c.type!r} for column {c.name!r} "
                                                  f"(one of {', '.join(sorted(TYPES))})", c.span.line, c.span.column))
                if names.count(c.name) > 1:
                    problems.append(SourceProblem(f".decl {item.relation}: column {c.name!r} appears twice", c.span.line, c.span.column))
            if not item.columns:
                problems.append(SourceProblem(f".decl {item.relation}: a relation needs at least one column", item.span.line, item.span.column))
            program.decls[item.relation] = item
        else:
            kind, names = item
            target = program.inputs if kind == "input" else program.outputs
            for name, span in names:
                target.setdefault(name, span)
    if problems:
        raise DatalogInvalid(problems)
    return program


def _syntax_message(e: UnexpectedInput) -> str:
    if isinstance(e, UnexpectedEOF):
        return "syntax error: the program ends in the middle of a rule or declaration (a missing '.' or ')'?)"
    if isinstance(e, UnexpectedCharacters):
        return f"syntax error: unexpected character {e.char!r}"
    if isinstance(e, UnexpectedToken):
        if e.token.type == "$END":
            return "syntax error: the program ends in the middle of a rule or declaration (a missing '.' or ')'?)"
        expected = sorted(_EXPECTED.get(t, t) for t in e.expected)
        return f"syntax error: unexpected {str(e.token)!r}; expected {', '.join(dict.fromkeys(expected))}"
    return f"syntax error: {e}"


_EXPECTED = {"NAME": "a name", "DOT": "'.'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "IF": "':-'",
             "COLON": "':'", "INT": "a number", "FLOAT": "a number", "STRING": "a string", "COMP": "a comparison"}
