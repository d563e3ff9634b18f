-- Query 11: user sessions (bids per bidder per session with a 10 s gap).
-- Flink's nexmark q11 (GROUP BY SESSION(date_time, INTERVAL '10' SECOND); Feldera's
-- benchmark has no q11), written with the SESSION window table function.
CREATE VIEW q11 AS
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(SESSION(TABLE bid, DESCRIPTOR(date_time), DESCRIPTOR(bidder), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
