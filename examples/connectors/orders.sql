-- Try a connector with one command, from the repository's root:
--   .venv/bin/python -m dbsp run examples/connectors/orders.sql --until-idle
-- The source applies the CSV files of examples/connectors/orders/ once each, in name
-- order (one tick per file here); each tick's delta of each view is written to
-- /tmp/dbsp-orders/<view>-<tick>.jsonl. Run it again: it resumes from .dbsp-state/orders
-- and, the files all applied, exits at once (docs/connectors.md, "Without the server").
CREATE TABLE orders (id BIGINT NOT NULL, customer VARCHAR, amount BIGINT) WITH ('connectors' = '[{
  "name": "orders-csv",
  "transport": {"name": "file_input", "config": {"path": "examples/connectors/orders"}},
  "format": {"name": "csv"}
}]');

CREATE VIEW big_orders WITH ('connectors' = '[{
  "name": "big-orders-files",
  "transport": {"name": "file_output", "config": {"path": "/tmp/dbsp-orders"}}
}]') AS SELECT * FROM orders WHERE amount > 100;

CREATE VIEW totals WITH ('connectors' = '[{
  "name": "totals-files",
  "transport": {"name": "file_output", "config": {"path": "/tmp/dbsp-orders"}}
}]') AS SELECT customer, SUM(amount) AS total, COUNT(*) AS orders FROM orders GROUP BY customer;
