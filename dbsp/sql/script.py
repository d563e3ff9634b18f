"""A SQL script -> its statements as sqlglot trees, with what sqlglot does not parse
itself recorded beside them.

The dialect's few Feldera/Calcite forms sqlglot does not know are recognised on
sqlglot's own tokens and blanked out (replaced by spaces, so every position in the
text stays where it was) before sqlglot parses the script:
- `LATENESS <interval>` after a column type in CREATE TABLE (recorded per column);
- `CREATE RECURSIVE VIEW`, `CREATE LOCAL VIEW` (the keyword is recorded per view);
- `DECLARE RECURSIVE VIEW name (...)` (read as CREATE TABLE and recorded as a
  declaration; the CREATE VIEW that follows defines it);
- `TABLE(TUMBLE(TABLE t, ...))`, also HOP and SESSION: the TABLE wrappers.
Feldera's `[LEFT] ASOF JOIN ... MATCH_CONDITION ...` is read by sqlglot itself, through
the dialect's parser hooks (dbsp/sql/dialect.py), not here.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Tokenizer, TokenType

from .. import budget
from ..limits import MAX_STATEMENTS, too_many_statements
from .dialect import DbspSql
from .errors import Span, SqlError, SqlProblem, SqlTooBig

#: window table functions as sqlglot reads them -> their name (SESSION is a keyword to
#: sqlglot, so the call is renamed, keeping its length, before parsing)
WINDOW_FUNCTIONS = {"TUMBLE": "TUMBLE", "HOP": "HOP", "SESSION": "SESSION", "SESSTVF": "SESSION"}


@dataclass
class Script:
    text: str
    statements: list[exp.Expression]
    lateness: dict[tuple[str, str], tuple[str, Span]] = field(default_factory=dict)  # (table, column) -> interval text
    recursive: set[str] = field(default_factory=set)  # views declared or created RECURSIVE
    local: set[str] = field(default_factory=set)  # CREATE LOCAL VIEW: no output
    declared: set[str] = field(default_factory=set)  # DECLARE RECURSIVE VIEW name (columns)
    line_starts: list[int] = field(default_factory=list)
    statement_spans: list[Span] = field(default_factory=list)  # each statement's whole text

    def span(self, node: exp.Expression | None) -> Span | None:
        """The text a node covers: from its first to its last positioned token."""
        if node is None:
            return None
        nodes = node if isinstance(node, (list, tuple)) else [node]  # a clause sqlglot keeps as a list (LATERAL VIEWs)
        starts, ends = [], []
        for n in (m for x in nodes if isinstance(x, exp.Expression) for m in x.walk()):
            meta = n.meta if hasattr(n, "meta") else None
            if meta and "start" in meta:
                starts.append(meta["start"])
                ends.append(meta["end"])
        if not starts:
            return None
        return self.offsets(min(starts), max(ends))

    def offsets(self, start: int, end: int) -> Span:
        import bisect

        def at(offset):
            line = bisect.bisect_right(self.line_starts, offset)
            return line, offset - self.line_starts[line - 1] + 1

        (l1, c1), (l2, c2) = at(start), at(end)
        return Span(l1, c1, l2, c2)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def parse_script(text: str) -> Script:
    script = Script(text, [], line_starts=_line_starts(text))
    try:
        tokens = Tokenizer().tokenize(text)
    except TokenError as e:
        raise SqlError([SqlProblem(f"cannot read the SQL text: {e}")]) from None
    chars = list(text)

    def blank(start: int, end: int):
        for i in range(start, end + 1):
            if chars[i] not in "\n":
                chars[i] = " "

    def word(i):
        return tokens[i].text.upper() if 0 <= i < len(tokens) else ""

    def matching(i):
        """index of the token closing the parenthesis at tokens[i]"""
        depth = 0
        for j in range(i, len(tokens)):
            if tokens[j].token_type == TokenType.L_PAREN:
                depth += 1
            elif tokens[j].token_type == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    return j
        return len(tokens) - 1

    def item_edge(i, step):
        """From tokens[i], walking by `step`, the index of the ',' or unmatched
        parenthesis that ends this element of a parenthesised list."""
        opening, closing = (TokenType.L_PAREN, TokenType.R_PAREN) if step > 0 else (TokenType.R_PAREN, TokenType.L_PAREN)
        depth = 0
        while 0 <= i < len(tokens):
            tt = tokens[i].token_type
            if tt == opening:
                depth += 1
            elif tt == closing:
                if depth == 0:
                    return i
                depth -= 1
            elif tt == TokenType.COMMA and depth == 0:
                return i
            i += step
        return i

    table_name = None
    statements, in_statement = 0, False
    i = 0
    while i < len(tokens):
        if not in_statement and tokens[i].token_type != TokenType.SEMICOLON:  # a statement starts
            in_statement, statements = True, statements + 1
            at = script.offsets(tokens[i].start, tokens[i].end)
            if statements > MAX_STATEMENTS:
                raise SqlTooBig([SqlProblem(f"the script has {too_many_statements('statements')}", at)])
            budget.check(f"statement {statements} (line {at})", at.line, at.column)
        w = word(i)
        if w == "CREATE" and word(i + 1) in ("RECURSIVE", "LOCAL") and word(i + 2) in ("VIEW", "MATERIALIZED"):
            name_at = i + 3 if word(i + 2) == "VIEW" else i + 4
            (script.recursive if word(i + 1) == "RECURSIVE" else script.local).add(tokens[name_at].text.lower() if name_at < len(tokens) else "")
            blank(tokens[i + 1].start, tokens[i + 1].end)
        elif w == "DECLARE" and word(i + 1) == "RECURSIVE" and word(i + 2) == "VIEW":
            # read as CREATE TABLE name (columns), recorded as a declaration
            if i + 3 < len(tokens):
                script.recursive.add(tokens[i + 3].text.lower())
                script.declared.add(tokens[i + 3].text.lower())
            start, end = tokens[i].start, tokens[i + 2].end
            chars[start:end + 1] = list("CREATE TABLE".ljust(end + 1 - start))
            i += 3
            continue
        elif w == "CREATE" and word(i + 1) == "TABLE":
            table_name = tokens[i + 2].text.lower() if i + 2 < len(tokens) else None
        elif w == "LATENESS" and table_name is not None:
            # the column definition around LATENESS: from after the '(' or ',' before it
            # to before the ',' or ')' after it, at the column list's depth
            column = tokens[item_edge(i - 1, -1) + 1].text.lower()
            j = item_edge(i + 1, +1)
            start, end = tokens[i + 1].start, tokens[j - 1].end
            script.lateness[(table_name, column)] = (text[start:end + 1], script.offsets(tokens[i].start, end))
            blank(tokens[i].start, end)
            i = j
            continue
        elif w == "TABLE" and word(i + 1) == "(" and word(i + 2) in WINDOW_FUNCTIONS and word(i + 3) == "(":
            close = matching(i + 1)
            blank(tokens[i].start, tokens[i + 1].end)
            blank(tokens[close].start, tokens[close].end)
            if word(i + 4) == "TABLE":
                blank(tokens[i + 4].start, tokens[i + 4].end)
            i += 2
            continue
        elif w == "SESSION" and word(i + 1) == "(" and word(i - 1) in ("(", "FROM", "JOIN"):
            chars[tokens[i].start:tokens[i].end + 1] = list("SESSTVF")
        elif tokens[i].token_type == TokenType.SEMICOLON:
            table_name, in_statement = None, False
        i += 1

    cleaned = "".join(chars)
    quiet = logging.getLogger("sqlglot")  # its "falling back to a Command" warning: we refuse those
    level, quiet.level = quiet.level, logging.ERROR
    try:
        statements = sqlglot.parse(cleaned, dialect=DbspSql)
    except ParseError as e:
        problems = []
        for err in e.errors or [{}]:
            line, col = err.get("line", 1), err.get("col", 1)
            desc = err.get("description", str(e))
            highlight = err.get("highlight", "")
            problems.append(SqlProblem(f"syntax error at {highlight!r}: {desc}" if highlight else f"syntax error: {desc}",
                                       Span(line, max(col - len(highlight) + 1, 1), line, max(col, 1))))
        raise SqlError(problems) from None
    finally:
        quiet.setLevel(level)
    script.statements = [s for s in statements if s is not None]
    # each statement's text, from the tokens between semicolons (blanked ones dropped)
    kept = Tokenizer().tokenize(cleaned)
    group: list = []
    for tok in kept + [None]:
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if group:
                script.statement_spans.append(script.offsets(group[0].start, group[-1].end))
            group = []
        else:
            group.append(tok)
    return script
