-- examples/circuits/order_tags.json as SQL: orders keyed by id (upserts), each with a list of tags.
CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, customer VARCHAR, tags ARRAY<VARCHAR>);

CREATE VIEW tag_counts AS
SELECT tag, COUNT(*) AS orders, COUNT(DISTINCT customer) AS customers
FROM orders CROSS JOIN UNNEST(tags) AS t(tag)
GROUP BY tag;

CREATE VIEW order_sizes AS
SELECT id, COALESCE(CARDINALITY(tags), 0) AS tag_count,
       COALESCE(ARRAY_CONTAINS(tags, 'urgent'), FALSE) AS urgent
FROM orders;
