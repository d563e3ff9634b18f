-- Query 7: the highest bids of each 10 s period.
-- Feldera's text groups by TUMBLE(B1.date_time, INTERVAL '10' SECOND) (Calcite's group
-- window function, refused here: "function TUMBLE() is not supported"); the same query
-- with the TUMBLE window table function:
CREATE VIEW q7 AS
SELECT B.auction, B.price, B.bidder, B.date_time, B.extra
FROM bid B
JOIN (
  SELECT MAX(B1.price) AS maxprice, window_end AS date_time
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND)) AS B1
  GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time;
