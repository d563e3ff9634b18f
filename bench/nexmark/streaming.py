"""The same Nexmark queries on Spark Structured Streaming (PySpark, local mode).

The generated batches are written as Parquet files, one per batch and table, and read
back as file streams with `maxFilesPerTrigger` 1, so each micro-batch is one of the
engine's ticks. Each query is Spark SQL over the streams' temporary views, started in
update mode, else append mode (the first that Spark accepts), with
`trigger(availableNow=True)`; each micro-batch's output is collected to the driver
(`foreachBatch` + `toArrow`, as the engine's deltas are). events/s is the events over
the wall time from `start()` to the end of the last micro-batch.

The result is checked against DuckDB's answer over all the events: append mode's rows
are the union of the micro-batches; update mode's, the last row per key (`KEYS`).
A query Spark refuses is recorded with the first line of its error, for each mode.

The Spark texts are the Nexmark queries in Spark's dialect: window(col, size[, slide])
and session_window(col, gap) for TUMBLE/HOP/SESSION. They are fixed texts of this
bench, never user text.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.nexmark.engine import bag

SPARK_SQL = {
    "q0": ("SELECT auction, bidder, price, date_time, extra FROM bid", None),
    "q1": ("SELECT auction, bidder, CAST(0.908 AS DOUBLE) * price AS price, date_time, extra FROM bid", None),
    "q2": ("SELECT auction, price FROM bid WHERE auction % 123 = 0", None),
    "q3": ("SELECT P.name, P.city, P.state, A.id FROM auction A JOIN person P ON A.seller = P.id "
           "WHERE A.category = 10 AND P.state IN ('OR', 'ID', 'CA')", None),
    "q4": ("""SELECT Q.category, AVG(Q.final) AS avg_final FROM
                (SELECT MAX(B.price) AS final, A.category FROM auction A JOIN bid B ON A.id = B.auction
                 WHERE B.date_time BETWEEN A.date_time AND A.expires
                 GROUP BY A.id, A.category) Q
              GROUP BY Q.category""", ["category"]),
    "q5": ("""SELECT AB.auction, AB.num FROM
                (SELECT auction, count(*) AS num, window.start AS starttime FROM bid
                 GROUP BY auction, window(date_time, '10 seconds', '2 seconds')) AB
              JOIN (SELECT max(num) AS maxn, starttime FROM
                      (SELECT count(*) AS num, window.start AS starttime FROM bid
                       GROUP BY auction, window(date_time, '10 seconds', '2 seconds'))
                    GROUP BY starttime) MB
              ON AB.starttime = MB.starttime AND AB.num >= MB.maxn""", None),
    "q6": ("""SELECT Q.seller, AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.date_time
                                              ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price FROM
                (SELECT id, seller, price, date_time FROM
                   (SELECT A.id, A.seller, B.price, B.date_time,
                           ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
                    FROM auction A JOIN bid B ON A.id = B.auction
                    WHERE B.date_time BETWEEN A.date_time AND A.expires)
                 WHERE rownum <= 1) Q""", None),
    "q7": ("""SELECT B.auction, B.price, B.bidder, B.date_time, B.extra FROM bid B
              JOIN (SELECT MAX(price) AS maxprice, window.end AS date_time FROM bid
                    GROUP BY window(date_time, '10 seconds')) B1
              ON B.price = B1.maxprice
              WHERE B.date_time BETWEEN B1.date_time - INTERVAL 10 SECONDS AND B1.date_time""", None),
    "q8": ("""SELECT P.id, P.name, P.starttime FROM
                (SELECT id, name, window.start AS starttime FROM person GROUP BY id, name, window(date_time, '10 seconds')) P
              JOIN (SELECT seller, window.start AS starttime FROM auction GROUP BY seller, window(date_time, '10 seconds')) A
              ON P.id = A.seller AND P.starttime = A.starttime""", None),
    "q9": ("""SELECT id, itemName, description, initialBid, reserve, date_time, expires, seller, category, extra,
                     auction, bidder, price, bid_dateTime, bid_extra FROM
                (SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_dateTime, B.extra AS bid_extra,
                        ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) AS rownum
                 FROM auction A JOIN bid B ON A.id = B.auction
                 WHERE B.date_time BETWEEN A.date_time AND A.expires)
              WHERE rownum <= 1""", None),
    "q10": ("SELECT auction, bidder, price, date_time, extra, date_format(date_time, 'yyyy-MM-dd'), "
            "date_format(date_time, 'HH:mm') FROM bid", None),
    "q11": ("SELECT bidder, count(*) AS bid_count, session_window.start AS starttime, session_window.end AS endtime "
            "FROM bid GROUP BY bidder, session_window(date_time, '10 seconds')", ["bidder", "starttime"]),
    "q12": ("SELECT bidder, count(*) AS bid_count, window.start AS starttime, window.end AS endtime "
            "FROM bid GROUP BY bidder, window(date_time, '10 seconds')", ["bidder", "starttime"]),
    "q14": ("""SELECT auction, bidder, CAST(0.908 AS DOUBLE) * price AS price,
                      CASE WHEN hour(date_time) >= 8 AND hour(date_time) <= 18 THEN 'dayTime'
                           WHEN hour(date_time) <= 6 OR hour(date_time) >= 20 THEN 'nightTime'
                           ELSE 'otherTime' END AS bidTimeType,
                      date_time, extra, length(extra) - length(replace(extra, 'c', '')) AS c_counts
               FROM bid
               WHERE CAST(0.908 AS DOUBLE) * price > 1000000 AND CAST(0.908 AS DOUBLE) * price < 50000000""", None),
    "q15": ("""SELECT CAST(date_time AS DATE) AS day, count(*) AS total_bids,
                     count(*) FILTER (WHERE price < 10000) AS rank1_bids,
                     count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
                     count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
                     count(DISTINCT bidder) AS total_bidders,
                     count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
                     count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
                     count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
                     count(DISTINCT auction) AS total_auctions,
                     count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
                     count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
                     count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
              FROM bid GROUP BY CAST(date_time AS DATE)""", ["day"]),
    "q16": ("""SELECT channel, CAST(date_time AS DATE) AS day, date_format(max(date_time), 'HH:mm') AS minute,
                     count(*) AS total_bids,
                     count(*) FILTER (WHERE price < 10000) AS rank1_bids,
                     count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
                     count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
                     count(DISTINCT bidder) AS total_bidders,
                     count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
                     count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
                     count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
                     count(DISTINCT auction) AS total_auctions,
                     count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
                     count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
                     count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
              FROM bid GROUP BY channel, CAST(date_time AS DATE)""", ["channel", "day"]),
    "q17": ("""SELECT auction, CAST(date_time AS DATE) AS day, count(*) AS total_bids,
                     count(*) FILTER (WHERE price < 10000) AS rank1_bids,
                     count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
                     count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
                     min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
              FROM bid GROUP BY auction, CAST(date_time AS DATE)""", ["auction", "day"]),
    "q18": ("""SELECT auction, bidder, price, channel, url, date_time, extra FROM
                 (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number FROM bid)
               WHERE rank_number <= 1""", None),
    "q19": ("""SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
               WHERE rank_number <= 10""", None),
    "q20": ("""SELECT auction, bidder, price, channel, url, B.date_time, B.extra, itemName, description, initialBid,
                      reserve, A.date_time AS AdateTime, expires, seller, category, A.extra AS Aextra
               FROM bid B JOIN auction A ON B.auction = A.id WHERE A.category = 10""", None),
    "q22": ("SELECT auction, bidder, price, channel, try_element_at(split(url, '/'), 4) AS dir1, "
            "try_element_at(split(url, '/'), 5) AS dir2, try_element_at(split(url, '/'), 6) AS dir3 FROM bid", None),
}
MODES = ["update", "append"]


class EventFiles:
    """The batches as Parquet files: <dir>/<table>/<batch number>.parquet."""

    def __init__(self, batches: list[dict[str, pa.Table]]):
        self.dir = Path(tempfile.mkdtemp(prefix="nexmark-sss-"))
        self.schemas = {}
        for name in batches[0]:
            (self.dir / name).mkdir()
            self.schemas[name] = batches[0][name].schema
            for k, batch in enumerate(batches):
                pq.write_table(batch[name], self.dir / name / f"{k:06d}.parquet")

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def error_class(error: Exception) -> str:
    """Spark's error class (its "condition") of a refusal, e.g.
    NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING; else the exception's type and the
    bracketed class at the start of its message, when there is one."""
    for getter in ("getCondition", "getErrorClass"):
        try:
            found = getattr(error, getter)()
        except Exception:  # older PySpark, or a JVM error without one
            found = None
        if found:
            return found
    text = str(error).strip()
    if text.startswith("[") and "]" in text:
        return text[1:text.index("]")]
    return type(error).__name__


def run_query(spark, name: str, files: EventFiles, events: int, expected: Counter | None) -> dict:
    """Run one query on Structured Streaming; returns events/s and the check, or each
    mode's refusal."""
    from pyspark.sql.types import StructType

    sql, keys = SPARK_SQL[name]
    for table, schema in files.schemas.items():
        struct = StructType.fromJson(spark.createDataFrame(schema.empty_table()).schema.jsonValue())
        stream = spark.readStream.schema(struct).option("maxFilesPerTrigger", 1).parquet(str(files.dir / table))
        stream.createOrReplaceTempView(table)
    refusals, classes = {}, {}
    for mode in MODES:
        outputs: list[pa.Table] = []
        checkpoint = tempfile.mkdtemp(prefix="nexmark-sss-ckpt-")
        try:
            frame = spark.sql(sql)
            writer = (frame.writeStream.outputMode(mode).option("checkpointLocation", checkpoint)
                      .foreachBatch(lambda df, _id: outputs.append(df.toArrow())).trigger(availableNow=True))
            t0 = time.perf_counter()
            query = writer.start()
            query.awaitTermination()
            seconds = time.perf_counter() - t0
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
        except Exception as error:  # Spark's AnalysisException / StreamingQueryException: its refusal
            refusals[mode] = _first_line(error)
            classes[mode] = error_class(error)
            continue
        finally:
            shutil.rmtree(checkpoint, ignore_errors=True)
        result = {"query": name, "mode": mode, "events": events, "seconds": round(seconds, 3),
                  "events_per_s": round(events / seconds), "micro_batches": len(outputs), "refused": refusals,
                  "error_classes": classes}
        if expected is not None:
            got = _final(outputs, mode, keys)
            result["matches_duckdb"] = got == expected
            if got != expected:
                result["check"] = f"{sum((got - expected).values())} rows more, {sum((expected - got).values())} fewer"
        return result
    return {"query": name, "refused": refusals, "error_classes": classes}


def _final(outputs: list[pa.Table], mode: str, keys: list[str] | None) -> Counter:
    if mode == "append" or keys is None:
        return bag(row for t in outputs for row in (tuple(r.values()) for r in t.to_pylist()))
    last = {}
    for t in outputs:
        for r in t.to_pylist():
            last[tuple(r[k] for k in keys)] = tuple(r.values())
    return bag(last.values())
