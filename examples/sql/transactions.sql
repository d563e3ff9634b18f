-- The seed's four views over transactions, as SQL (drawn: examples/circuits/transactions.json).
CREATE TABLE transactions (
    id BIGINT NOT NULL,
    from_acct BIGINT NOT NULL,
    to_acct BIGINT NOT NULL,
    amount BIGINT NOT NULL
);

CREATE VIEW credits AS
SELECT to_acct, SUM(amount) AS credits FROM transactions GROUP BY to_acct;

CREATE VIEW debits AS
SELECT from_acct, SUM(amount) AS debits FROM transactions GROUP BY from_acct;

CREATE VIEW balance AS
SELECT c.to_acct AS account, c.credits - d.debits AS balance
FROM credits c JOIN debits d ON c.to_acct = d.from_acct;

-- SQL's SUM of no rows is NULL; COALESCE gives the drawn circuit's 0 (docs/sql.md).
CREATE VIEW total AS
SELECT COALESCE(SUM(balance), 0) AS total FROM balance;
