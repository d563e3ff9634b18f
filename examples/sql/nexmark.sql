-- Nexmark's online auction, live: people register, open auctions and bid. Each table is
-- fed by the nexmark source (the benchmark's event model, 1:3:46 people, auctions and
-- bids, hot auctions and bidders), 200 events a second for 5 minutes, the same events
-- for the same seed. Start a run and watch the views change; bench/nexmark runs the
-- same queries at full speed (docs/nexmark.md).
CREATE TABLE person (
    id BIGINT,
    name VARCHAR,
    emailAddress VARCHAR,
    creditCard VARCHAR,
    city VARCHAR,
    state VARCHAR,
    date_time TIMESTAMP NOT NULL,
    extra VARCHAR
) WITH ('connectors' = '[{"name": "people", "transport": {"name": "nexmark_input",
                          "config": {"table": "person", "rate": 200, "events": 60000, "seed": 1}}}]');
CREATE TABLE auction (
    id BIGINT,
    itemName VARCHAR,
    description VARCHAR,
    initialBid BIGINT,
    reserve BIGINT,
    date_time TIMESTAMP NOT NULL,
    expires TIMESTAMP,
    seller BIGINT,
    category BIGINT,
    extra VARCHAR
) WITH ('connectors' = '[{"name": "auctions", "transport": {"name": "nexmark_input",
                          "config": {"table": "auction", "rate": 200, "events": 60000, "seed": 1}}}]');
CREATE TABLE bid (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel VARCHAR,
    url VARCHAR,
    date_time TIMESTAMP NOT NULL,
    extra VARCHAR
) WITH ('connectors' = '[{"name": "bids", "transport": {"name": "nexmark_input",
                          "config": {"table": "bid", "rate": 200, "events": 60000, "seed": 1}}}]');

-- q3: local item suggestion: who sells category 10 in Oregon, Idaho or California
CREATE VIEW local_sellers AS SELECT P.name, P.city, P.state, A.id
FROM auction AS A INNER JOIN person AS P ON A.seller = P.id
WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');

-- q4: the average closing price per category (the winning bid of each auction)
CREATE VIEW category_prices AS SELECT Q.category, AVG(Q.final) AS avg_final
FROM (SELECT MAX(B.price) AS final, A.category
      FROM auction A, bid B
      WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
      GROUP BY A.id, A.category) Q
GROUP BY Q.category;

-- q6: each seller's average selling price over their last 10 closed auctions (a window aggregate)
CREATE VIEW seller_prices AS SELECT Q.seller,
    AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.date_time ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
FROM (SELECT id, seller, price, date_time FROM (
        SELECT A.id, A.seller, B.price, B.date_time,
               ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
        FROM auction AS A, bid AS B
        WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires)
      WHERE rownum <= 1) AS Q;

-- q7: the highest bid of each 10-second tumbling window
CREATE VIEW highest_bids AS SELECT B.auction, B.price, B.bidder, B.date_time
FROM bid B
JOIN (SELECT MAX(B1.price) AS maxprice, window_end AS date_time
      FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND)) AS B1
      GROUP BY window_start, window_end) B1
ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time;

-- bids per channel, the hot four against the rest
CREATE VIEW channels AS SELECT channel, COUNT(*) AS bids, MAX(price) AS top_price FROM bid GROUP BY channel;
