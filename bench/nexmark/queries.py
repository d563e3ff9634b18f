"""The Nexmark queries: our dialect's text (queries/qN.sql over tables.sql), which of
them our compiler takes (and the exact refusal of the others), and the oracle's text of
each compiling query for DuckDB.

The DuckDB texts are written apart from ours (DuckDB's own functions: `time_bucket`
for tumbling and hopping windows, LAG for sessions, its own ASOF LEFT JOIN for q13), so the check shares no code with
the SQL front end or the engine. Where a query's ROW_NUMBER() leaves ties open, the
DuckDB text spells out the tie-break our top-k defines (docs/sql.md: the remaining
columns ascending).
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = [f"q{n}" for n in range(23)]


def tables_sql() -> str:
    return (HERE / "tables.sql").read_text()


def query_sql(name: str) -> str:
    return (HERE / "queries" / f"{name}.sql").read_text()


def script(name: str) -> str:
    """The tables and the query, as one script (the query's line numbers follow the
    tables': a refusal's line:column is in this script)."""
    return tables_sql() + "\n" + query_sql(name)


def refusal(name: str) -> str | None:
    """None when the query compiles; else every problem as `line:column: message` with
    the line counted in the query's own file."""
    from dbsp.sql import compile_sql
    from dbsp.sql.errors import SqlError

    offset = tables_sql().count("\n") + 1
    try:
        compile_sql(script(name))
    except SqlError as error:
        out = []
        for p in error.problems:
            span = p.span
            where = f"{span.line - offset}:{span.column}" if span is not None else "?"
            out.append(f"{where}: {p.message}")
        return "; ".join(out)
    return None


def compile_query(name: str):
    from dbsp import compile_plan
    from dbsp.sql import compile_sql

    return compile_plan(compile_sql(script(name)))


_BUCKET = "time_bucket(INTERVAL {size}, date_time, TIMESTAMP '1970-01-01')"

#: DuckDB's text of each query our compiler takes (output columns in the view's order)
ORACLE = {
    "q0": "SELECT auction, bidder, price, date_time, extra FROM bid",
    "q1": "SELECT auction, bidder, CAST(0.908 AS DOUBLE) * price AS price, date_time, extra FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q3": "SELECT P.name, P.city, P.state, A.id FROM auction A JOIN person P ON A.seller = P.id "
          "WHERE A.category = 10 AND P.state IN ('OR', 'ID', 'CA')",
    "q4": """
        WITH closing AS (SELECT A.id, A.category, MAX(B.price) AS final
                         FROM auction A JOIN bid B ON A.id = B.auction
                         WHERE B.date_time >= A.date_time AND B.date_time <= A.expires
                         GROUP BY A.id, A.category)
        SELECT category, AVG(final) FROM closing GROUP BY category""",
    "q5": f"""
        WITH hop AS (SELECT auction, {_BUCKET.format(size="2 SECOND")} - k * INTERVAL 2 SECOND AS ws
                     FROM bid, range(5) AS t(k)),
             counts AS (SELECT auction, COUNT(*) AS num, ws FROM hop GROUP BY auction, ws),
             most AS (SELECT ws, MAX(num) AS maxn FROM counts GROUP BY ws)
        SELECT c.auction, c.num FROM counts c JOIN most m ON c.ws = m.ws AND c.num >= m.maxn""",
    "q7": f"""
        WITH top AS (SELECT MAX(price) AS maxprice, {_BUCKET.format(size="10 SECOND")} + INTERVAL 10 SECOND AS we
                     FROM bid GROUP BY {_BUCKET.format(size="10 SECOND")})
        SELECT B.auction, B.price, B.bidder, B.date_time, B.extra
        FROM bid B JOIN top ON B.price = top.maxprice
        WHERE B.date_time >= top.we - INTERVAL 10 SECOND AND B.date_time <= top.we""",
    "q8": f"""
        SELECT P.id, P.name, P.ws FROM
          (SELECT DISTINCT id, name, {_BUCKET.format(size="10 SECOND")} AS ws FROM person) P
        JOIN (SELECT DISTINCT seller, {_BUCKET.format(size="10 SECOND")} AS ws FROM auction) A
          ON P.id = A.seller AND P.ws = A.ws""",
    "q9": """
        SELECT id, itemname, description, initialbid, reserve, date_time, expires, seller, category, extra,
               auction, bidder, price, bid_datetime, bid_extra
        FROM (SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_datetime, B.extra AS bid_extra,
                     ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) AS rownum
              FROM auction A JOIN bid B ON A.id = B.auction
              WHERE B.date_time BETWEEN A.date_time AND A.expires)
        WHERE rownum <= 1""",
    "q6": """
        SELECT seller, AVG(price) OVER (PARTITION BY seller ORDER BY date_time, id, price
                                        ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
        FROM (SELECT id, seller, price, date_time
              FROM (SELECT A.id, A.seller, B.price, B.date_time,
                           ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC, B.date_time ASC) AS rownum
                    FROM auction A JOIN bid B ON A.id = B.auction
                    WHERE B.date_time BETWEEN A.date_time AND A.expires)
              WHERE rownum <= 1)""",
    "q10": "SELECT auction, bidder, price, date_time, extra, strftime(date_time, '%Y-%m-%d'), strftime(date_time, '%H:%M') "
           "FROM bid",
    "q11": """
        WITH marked AS (
               SELECT bidder, date_time,
                      CASE WHEN date_time - LAG(date_time) OVER (PARTITION BY bidder ORDER BY date_time)
                                < INTERVAL 10 SECOND THEN 0 ELSE 1 END AS starts
               FROM bid),
             numbered AS (
               SELECT bidder, date_time,
                      SUM(starts) OVER (PARTITION BY bidder ORDER BY date_time ROWS UNBOUNDED PRECEDING) AS session
               FROM marked)
        SELECT bidder, COUNT(*) AS bid_count, MIN(date_time) AS starttime,
               MAX(date_time) + INTERVAL 10 SECOND AS endtime
        FROM numbered GROUP BY bidder, session""",
    "q12": f"""
        SELECT bidder, COUNT(*) AS bid_count, ws AS starttime, ws + INTERVAL 10 SECOND AS endtime
        FROM (SELECT bidder, {_BUCKET.format(size="10 SECOND")} AS ws FROM bid) GROUP BY bidder, ws""",
    "q13": """
        SELECT B.auction, B.bidder, B.price, B.date_time, S.value
        FROM (SELECT *, date_time AS p_time, auction % 10000 AS mod FROM bid) B
        ASOF LEFT JOIN side_input S ON B.mod = S.key AND B.p_time >= S.date_time""",
    "q14": """
        SELECT auction, bidder, CAST(0.908 AS DOUBLE) * price AS price,
               CASE WHEN extract(hour FROM date_time) BETWEEN 8 AND 18 THEN 'dayTime'
                    WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
                    ELSE 'otherTime' END AS bidTimeType,
               date_time, extra, CAST(length(extra) - length(replace(extra, 'c', '')) AS BIGINT) AS c_counts
        FROM bid
        WHERE CAST(0.908 AS DOUBLE) * price > 1000000 AND CAST(0.908 AS DOUBLE) * price < 50000000""",
    "q15": """
        SELECT CAST(date_time AS DATE) AS day, COUNT(*),
               COUNT(*) FILTER (WHERE price < 10000), COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(*) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT bidder), COUNT(DISTINCT bidder) FILTER (WHERE price < 10000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT auction), COUNT(DISTINCT auction) FILTER (WHERE price < 10000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 1000000)
        FROM bid GROUP BY CAST(date_time AS DATE)""",
    "q16": """
        SELECT channel, CAST(date_time AS DATE) AS day, strftime(MAX(date_time), '%H:%M') AS minute, COUNT(*),
               COUNT(*) FILTER (WHERE price < 10000), COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(*) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT bidder), COUNT(DISTINCT bidder) FILTER (WHERE price < 10000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT auction), COUNT(DISTINCT auction) FILTER (WHERE price < 10000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 1000000)
        FROM bid GROUP BY channel, CAST(date_time AS DATE)""",
    "q17": """
        SELECT auction, CAST(date_time AS DATE) AS day, COUNT(*),
               COUNT(*) FILTER (WHERE price < 10000), COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(*) FILTER (WHERE price >= 1000000), MIN(price), MAX(price), AVG(price), SUM(price)
        FROM bid GROUP BY auction, CAST(date_time AS DATE)""",
    "q18": """
        SELECT auction, bidder, price, channel, url, date_time, extra
        FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number
              FROM bid)
        WHERE rank_number <= 1""",
    "q19": """
        SELECT * FROM
          (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction
                                        ORDER BY price DESC, bidder, channel, url, date_time, extra) AS rank_number
           FROM bid)
        WHERE rank_number <= 10""",
    "q22": "SELECT auction, bidder, price, channel, string_split(url, '/')[4], string_split(url, '/')[5], "
           "string_split(url, '/')[6] FROM bid",
    "q20": """
        SELECT auction, bidder, price, channel, url, B.date_time, B.extra,
               itemname, description, initialbid, reserve, A.date_time AS adatetime, expires, seller, category,
               A.extra AS aextra
        FROM bid B JOIN auction A ON B.auction = A.id WHERE A.category = 10""",
}
