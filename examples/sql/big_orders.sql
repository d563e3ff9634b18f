-- examples/circuits/big_orders.json as SQL
CREATE TABLE orders (id BIGINT NOT NULL, customer VARCHAR, amount BIGINT);

CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100;
