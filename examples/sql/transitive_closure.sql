-- examples/circuits/transitive_closure.json as SQL: a recursive view is a fixed point.
CREATE TABLE edges (src BIGINT NOT NULL, dst BIGINT NOT NULL);

CREATE RECURSIVE VIEW closure AS
SELECT src, dst FROM edges
UNION
SELECT p.src, e.dst FROM closure p JOIN edges e ON p.dst = e.src;
