"""The meaning of a Datalog program: relations and their columns, rule safety, arity,
types, and the strata (stratified negation), every problem named by rule and line:column.

- A relation with rules is *derived*; one used in a body without rules is an *input*,
  typed by its `.decl` or by the schema pushed to it (`schemas`).
- Safety: every variable of a head, a negated atom or a comparison is bound by a
  positive body atom, or by `v = expression` over bound variables.
- Strata: the strongly connected components of "head depends on body relation", in
  dependency order; a component is recursive when a rule of it uses it. A negated atom
  must name a relation of a lower stratum; otherwise the program is refused, naming
  the rules of a cycle through the negation.
- Types: columns of derived relations come from `.decl`, or are inferred from the rules
  (iterating over a recursive stratum from its non-recursive rules). Expressions are
  typed by the engine's own expression language (dbsp.expr), which they compile to.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import budget
from ..errors import ExpressionError
from ..expr import parse_expression
from ..types import Column, Schema
from ..validate import _components
from .errors import DatalogInvalid, SourceProblem
from .syntax import TYPES, Atom, BinOp, Comparison, Const, Neg, Program, Rule, Span, Var, variables

UNIT = "no__vars"  # the column of a binding with no variables (reserved: variables may not contain __)


@dataclass
class Relation:
    name: str
    input: bool
    span: Span  # its .decl, or its first use
    rules: list[Rule] = field(default_factory=list)
    columns: list[tuple[str, str]] | None = None  # (name, type), None until known
    arity: int | None = None

    @property
    def names(self) -> list[str]:
        return [c for c, _ in self.columns]


@dataclass
class Stratum:
    relations: list[str]
    recursive: bool


@dataclass
class Checked:
    program: Program
    relations: dict[str, Relation]
    strata: list[Stratum]
    outputs: list[str]
    bindings: dict[int, dict[str, str]]  # rule index -> variable -> type
    assigned: dict[int, set[str]]  # rule index -> variables bound by `v = expr`


def sql(term) -> str:
    """A term as an expression of the circuit format (variables are quoted columns)."""
    if isinstance(term, Var):
        return f'"{term.name}"'
    if isinstance(term, Const):
        v = term.value
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        return repr(v)
    if isinstance(term, Neg):
        return f"(-{sql(term.operand)})"
    if isinstance(term, BinOp):
        return f"({sql(term.left)} {term.op} {sql(term.right)})"
    if isinstance(term, Comparison):
        return f"{sql(term.left)} {'<>' if term.op == '!=' else term.op} {sql(term.right)}"
    raise TypeError(term)


def const_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint"
    if isinstance(value, float):
        return "double"
    return "string"


def fits(value, column_type: str) -> bool:
    """Whether a constant can stand in a column of this type."""
    t = const_type(value)
    return t == column_type or (t == "bigint" and column_type == "double") or (t == "string" and column_type in ("date", "timestamp"))


def _problem(message: str, span: Span, rule: Rule | None = None) -> SourceProblem:
    where = f"{rule.where()}: " if rule is not None else ""
    return SourceProblem(where + message, span.line, span.column, rule.index if rule is not None else None)


def check_program(program: Program, schemas: dict[str, list[dict]] | None = None) -> Checked:
    """Check a parsed program; raise DatalogInvalid listing every problem found."""
    schemas = schemas or {}
    problems: list[SourceProblem] = []
    relations = _relations(program, schemas, problems)
    if problems:
        raise DatalogInvalid(problems)
    assigned = {}
    for r in program.rules:
        budget.check(r.where(), r.span.line, r.span.column)
        assigned[r.index] = _safety(r, problems)
    strata = _strata(program, relations, problems)
    if problems:
        raise DatalogInvalid(problems)
    bindings = _types(program, relations, strata, problems)
    if problems:
        raise DatalogInvalid(problems)
    outputs = list(program.outputs) or [n for n, r in relations.items() if not r.input]
    return Checked(program, relations, strata, outputs, bindings, assigned)


# ---- relations and arity --------------------------------------------------------------
def _relations(program: Program, schemas, problems) -> dict[str, Relation]:
    relations: dict[str, Relation] = {}
    for rule in program.rules:
        head = rule.head
        if head.relation not in relations:
            decl = program.decls.get(head.relation)
            relations[head.relation] = Relation(head.relation, False, decl.span if decl else head.span)
        relations[head.relation].rules.append(rule)
        if not rule.body:
            problems.append(_problem("a fact in the program text: push facts to an input relation instead "
                                     "(a rule needs a body)", rule.span, rule))
    for rule in program.rules:
        for lit in rule.body:
            if isinstance(lit, Atom) and lit.relation not in relations:
                decl = program.decls.get(lit.relation)
                if decl is None and lit.relation not in schemas:
                    problems.append(_problem(f"unknown relation {lit.relation!r}: no rule derives it, no .decl declares it "
                                             "and no schema was pushed to it", lit.span, rule))
                    continue
                relations[lit.relation] = Relation(lit.relation, True, decl.span if decl else lit.span)
    for name, decl in program.decls.items():  # declared, never used: still an input one can push to
        relations.setdefault(name, Relation(name, True, decl.span))
    for name, rel in relations.items():
        decl = program.decls.get(name)
        if decl is not None:
            rel.columns = [(c.name, TYPES[c.type]) for c in decl.columns]
        elif rel.input:
            rel.columns = _pushed_columns(name, schemas[name], rel.span, problems)
        if rel.columns is not None:
            rel.arity = len(rel.columns)
    for name, span in program.inputs.items():
        if name not in relations:
            problems.append(SourceProblem(f".input {name}: no relation {name!r} is declared or used", span.line, span.column))
        elif not relations[name].input:
            rule = relations[name].rules[0]
            problems.append(SourceProblem(f".input {name}: {name!r} is derived by rules ({rule.where()}); an input "
                                          "relation only gets pushed facts", span.line, span.column))
    for name, span in program.outputs.items():
        if name not in relations:
            problems.append(SourceProblem(f".output {name}: no relation {name!r} is declared or derived", span.line, span.column))
    for rule in program.rules:
        for atom in [rule.head] + [lit for lit in rule.body if isinstance(lit, Atom)]:
            rel = relations.get(atom.relation)
            if rel is None:
                continue
            if rel.arity is None:
                rel.arity = len(atom.args)
                if rel.arity == 0:
                    problems.append(_problem(f"relation {atom.relation!r} has no columns (a relation needs at least one)", atom.span, rule))
            elif len(atom.args) != rel.arity:
                problems.append(_problem(f"{atom.relation} has {rel.arity} column{'s' * (rel.arity != 1)} "
                                         f"(declared or first used at line {rel.span}), used here with {len(atom.args)}", atom.span, rule))
    return relations


def _pushed_columns(name, schema, span, problems):
    try:
        columns = Schema.from_list(schema).columns
    except Exception as e:  # a malformed schema given by the caller
        problems.append(SourceProblem(f"the schema pushed to {name!r} is not a list of columns: {e}", span.line, span.column))
        return None
    return [(c.name, c.type) for c in columns]


# ---- safety ----------------------------------------------------------------------------
def _safety(rule: Rule, problems) -> set[str]:
    """Check that every variable is bound; returns the variables bound by `v = expr`."""
    bound = set()
    for lit in rule.body:
        if isinstance(lit, Atom) and not lit.negated:
            for arg in lit.args:
                if isinstance(arg, (BinOp, Neg)):
                    problems.append(_problem("an argument of a body atom is a variable, a constant or _ "
                                             "(compute with a comparison: ..., y = x + 1)", arg.span, rule))
                elif isinstance(arg, Var) and arg.name != "_":
                    bound.add(arg.name)
    for v in variables(rule.head) + [v for lit in rule.body for v in variables(lit)]:
        if "__" in v.name:
            problems.append(_problem(f"variable names with __ are reserved ({v.name})", v.span, rule))
    assigned: set[str] = set()
    comparisons = [lit for lit in rule.body if isinstance(lit, Comparison)]
    progress = True
    while progress:  # v = expr binds v once the expression's variables are bound
        progress = False
        for c in comparisons:
            if c.op != "=":
                continue
            for lone, other in ((c.left, c.right), (c.right, c.left)):
                if isinstance(lone, Var) and lone.name != "_" and lone.name not in bound \
                        and all(v.name in bound for v in variables(other)):
                    bound.add(lone.name)
                    assigned.add(lone.name)
                    progress = True
                    break
    for v in variables(rule.head):
        if v.name == "_":
            problems.append(_problem("_ in a head: a head names every value it derives", v.span, rule))
        elif v.name not in bound:
            problems.append(_problem(f"unsafe variable {v.name}: it appears in the head but in no positive body atom", v.span, rule))
    for lit in rule.body:
        if isinstance(lit, Atom) and lit.negated:
            for arg in lit.args:
                if isinstance(arg, (BinOp, Neg)):
                    problems.append(_problem("an argument of a negated atom is a variable, a constant or _", arg.span, rule))
            for v in variables(lit):
                if v.name != "_" and v.name not in bound:
                    problems.append(_problem(f"unsafe variable {v.name}: it appears in a negated atom but in no positive "
                                             "body atom (use _ for a value that does not matter)", v.span, rule))
        elif isinstance(lit, Comparison):
            for v in variables(lit):
                if v.name == "_":
                    problems.append(_problem("_ in a comparison", v.span, rule))
                elif v.name not in bound:
                    problems.append(_problem(f"unsafe variable {v.name}: it appears in a comparison but in no positive body atom", v.span, rule))
    if rule.body and not any(isinstance(lit, Atom) and not lit.negated for lit in rule.body):
        problems.append(_problem("a rule needs at least one positive body atom", rule.span, rule))
    return assigned


# ---- strata ------------------------------------------------------------------------------
def _strata(program: Program, relations: dict[str, Relation], problems) -> list[Stratum]:
    derived = [n for n, r in relations.items() if not r.input]
    succ: dict[str, list[str]] = {n: [] for n in derived}
    via: dict[tuple[str, str], Rule] = {}
    for rule in program.rules:
        for lit in rule.body:
            if isinstance(lit, Atom) and lit.relation in succ and lit.relation not in succ[rule.head.relation]:
                succ[rule.head.relation].append(lit.relation)
                via[(rule.head.relation, lit.relation)] = rule
    position = {n: i for i, n in enumerate(derived)}
    strata = []
    for component in _components(derived, succ):  # dependencies come first
        budget.check(f"the strata ({component[0]})")
        members = set(component)
        recursive = len(component) > 1 or component[0] in succ[component[0]]
        for rule in sorted((r for m in component for r in relations[m].rules), key=lambda r: r.index):
            for lit in rule.body:
                if isinstance(lit, Atom) and lit.negated and lit.relation in members:
                    problems.append(_negative_cycle(rule, lit, succ, via, members))
        strata.append(Stratum(sorted(component, key=position.__getitem__), recursive))
    return strata


def _negative_cycle(rule: Rule, lit: Atom, succ, via, members) -> SourceProblem:
    """The rule with the negation and the rules of a shortest dependency path from the
    negated relation back to the rule's head: together, a cycle through negation."""
    came_from = {lit.relation: None}
    frontier = [lit.relation]
    while rule.head.relation not in came_from and frontier:
        following = []
        for n in frontier:
            for m in succ[n]:
                if m in members and m not in came_from:
                    came_from[m] = n
                    following.append(m)
        frontier = following
    chain = [rule.head.relation]
    while came_from[chain[-1]] is not None:
        chain.append(came_from[chain[-1]])
    cycle_rules = [rule] + [via[(a, b)] for a, b in zip(chain[::-1], chain[::-1][1:])]
    names = "; ".join(f"rule {r.index} at line {r.span}: {r.text}" for r in {r.index: r for r in cycle_rules}.values())
    return _problem(f"not stratifiable: {rule.head.relation} depends on the negation of {lit.relation}, which depends on "
                    f"{rule.head.relation} (a cycle through negation: {names})", lit.span, rule)


# ---- types ---------------------------------------------------------------------------------
def _types(program: Program, relations, strata: list[Stratum], problems) -> dict[int, dict[str, str]]:
    bindings: dict[int, dict[str, str]] = {}
    for stratum in strata:
        pending = [r for name in stratum.relations for r in relations[name].rules]
        pending.sort(key=lambda r: r.index)
        while pending:
            ready = [r for r in pending
                     if all(relations[lit.relation].columns is not None for lit in r.body if isinstance(lit, Atom))]
            taken = {r.index for r in ready}
            pending = [r for r in pending if r.index not in taken]
            if not ready:
                for name in stratum.relations:
                    if relations[name].columns is None:
                        rel = relations[name]
                        problems.append(_problem(f"cannot infer the column types of {name!r}: every rule deriving it "
                                                 f"uses it recursively; declare it (.decl {name}(...))", rel.span))
                return bindings
            for rule in ready:
                budget.check(rule.where(), rule.span.line, rule.span.column)
                found = _type_rule(rule, relations, problems)
                if found is not None:
                    bindings[rule.index] = found
    return bindings


def _type_rule(rule: Rule, relations, problems) -> dict[str, str] | None:
    types: dict[str, str] = {}
    where: dict[str, str] = {}
    before = len(problems)
    for lit in rule.body:
        if not isinstance(lit, Atom):
            continue
        columns = relations[lit.relation].columns
        for arg, (col, col_type) in zip(lit.args, columns):
            if isinstance(arg, Const) and not fits(arg.value, col_type):
                problems.append(_problem(f"type error: {lit.relation}.{col} is {col_type}, the constant {arg.value!r} is "
                                         f"{const_type(arg.value)}", arg.span, rule))
            elif isinstance(arg, Var) and arg.name != "_":
                here = f"{lit.relation}.{col}"
                if lit.negated and arg.name not in types:
                    continue  # (reported as unsafe)
                if arg.name in types and types[arg.name] != col_type:
                    problems.append(_problem(f"type error: {arg.name} is {types[arg.name]} (as {where[arg.name]}) but "
                                             f"{col_type} as {here}", arg.span, rule))
                elif not lit.negated:
                    types.setdefault(arg.name, col_type)
                    where.setdefault(arg.name, here)
    if len(problems) > before:
        return None
    comparisons = [lit for lit in rule.body if isinstance(lit, Comparison)]
    done = set()
    progress = True
    while progress:  # assignments, in the order their inputs become typed
        progress = False
        for c in comparisons:
            if id(c) in done or c.op != "=":
                continue
            for lone, other in ((c.left, c.right), (c.right, c.left)):
                if isinstance(lone, Var) and lone.name not in types and all(v.name in types for v in variables(other)):
                    t = _expr_type(other, types, rule, problems)
                    if t is None:
                        return None
                    types[lone.name] = t
                    done.add(id(c))
                    progress = True
                    break
    for c in comparisons:
        if id(c) not in done and _expr_type(c, types, rule, problems) is None:
            return None
    head = relations[rule.head.relation]
    head_types = []
    for i, arg in enumerate(rule.head.args):
        t = _expr_type(arg, types, rule, problems)
        if t is None:
            return None
        head_types.append(t)
    if head.columns is None:
        head.columns = [(_column_name(rule.head, i), t) for i, t in enumerate(head_types)]
    else:
        for arg, (col, col_type), t in zip(rule.head.args, head.columns, head_types):
            if t != col_type and not (t == "bigint" and col_type == "double"):
                problems.append(_problem(f"type error: {head.name}.{col} is {col_type}, this rule derives {t}", arg.span, rule))
                return None
    return types


def _column_name(head: Atom, i: int) -> str:
    arg = head.args[i]
    names = [a.name for a in head.args if isinstance(a, Var)]
    if isinstance(arg, Var) and names.count(arg.name) == 1:
        return arg.name
    return f"c{i + 1}"


def _expr_type(term, types: dict[str, str], rule: Rule, problems) -> str | None:
    schema = Schema(tuple(Column(name, t, False) for name, t in types.items()))
    try:
        return parse_expression(sql(term), schema).type
    except ExpressionError as e:
        problems.append(_problem(f"type error in {_text(term)}: {e}", term.span, rule))
        return None


def _text(term) -> str:
    if isinstance(term, Var):
        return term.name
    if isinstance(term, Const):
        return repr(term.value) if isinstance(term.value, str) else str(term.value).lower() if isinstance(term.value, bool) else str(term.value)
    if isinstance(term, Neg):
        return f"-{_text(term.operand)}"
    if isinstance(term, (BinOp, Comparison)):
        return f"{_text(term.left)} {term.op} {_text(term.right)}"
    return str(term)
