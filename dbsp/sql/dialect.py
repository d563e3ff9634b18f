"""The SQL dialect sqlglot parses our scripts in: sqlglot's default dialect plus
Feldera's (Calcite's) ASOF join spelling, which the default does not read:

    FROM a LEFT ASOF JOIN b MATCH_CONDITION (a.t >= b.t) ON a.k = b.k
    FROM a ASOF JOIN b MATCH_CONDITION a.t >= b.t ON a.k = b.k   (parentheses optional)

sqlglot's parser already reads `ASOF [LEFT] JOIN` (DuckDB's order, the method before
the side) and Snowflake's `MATCH_CONDITION (cmp)` into `exp.Join`'s `method` and
`match_condition`; this dialect adds the two things Feldera's text needs, as parser
hooks (no text rewriting, so every position stays sqlglot's own):
- `MATCH_CONDITION` is a keyword of the tokenizer (it is one only in Snowflake's);
- the side may come before ASOF (`LEFT ASOF JOIN`), and the match condition need not
  be parenthesised (Feldera's Nexmark q13 writes `MATCH_CONDITION B.p_time >= S.date_time`);
- the condition is read as any expression (sqlglot's hook reads only a comparison, so
  `a.t = b.t` was a bare syntax error): the compiler refuses what is not `>=`, `>`, `<=`
  or `<` between a column of each side, naming it and its line:column.
"""
from __future__ import annotations

from sqlglot import tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.parser import Parser
from sqlglot.tokens import TokenType


class DbspSql(Dialect):
    class Tokenizer(tokens.Tokenizer):
        KEYWORDS = {**tokens.Tokenizer.KEYWORDS, "MATCH_CONDITION": TokenType.MATCH_CONDITION}

    class Parser(Parser):
        def _parse_join_parts(self):
            method, side, kind = super()._parse_join_parts()
            # Feldera's order, `LEFT ASOF JOIN`: the side first, then the method
            if method is None and side is not None and kind is None and self._match(TokenType.ASOF):
                method = self._prev
            return method, side, kind

        def _parse_wrapped(self, parse_method, optional: bool = False):
            if self._prev is not None and self._prev.token_type == TokenType.MATCH_CONDITION:
                # `MATCH_CONDITION a.t >= b.t` without parentheses, as Feldera's q13 writes
                # it; and the condition read whole (`a.t = b.t`, `x AND y`), not only as a
                # comparison, so the compiler can say what is wrong with it at its place
                optional = True
                parse_method = self._parse_disjunction if self._curr and self._curr.token_type == TokenType.L_PAREN \
                    else self._parse_equality
            return super()._parse_wrapped(parse_method, optional)


def parse(text: str):
    import sqlglot

    return sqlglot.parse(text, dialect=DbspSql)


def parse_one(text: str):
    import sqlglot

    return sqlglot.parse_one(text, dialect=DbspSql)
