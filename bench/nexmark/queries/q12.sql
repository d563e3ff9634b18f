-- Query 12: bids per bidder per 10 s period.
-- Feldera's text groups by TUMBLE(B.date_time, INTERVAL '10' SECOND) over processing
-- time in Flink, event time here; with the TUMBLE table function:
CREATE VIEW q12 AS
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
