-- Query 6: average selling price per seller over its last 10 closed auctions.
-- Flink's nexmark q6 (nexmark/nexmark, queries/q6.sql; Feldera's benchmark has no q6),
-- its winning bid as q9 finds it.
CREATE VIEW q6 AS
SELECT
    Q.seller,
    AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.date_time ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
FROM (
    SELECT id, seller, price, date_time FROM (
        SELECT A.id, A.seller, B.price, B.date_time,
               ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
        FROM auction AS A, bid AS B
        WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
    ) WHERE rownum <= 1
) AS Q;
