-- examples/circuits/not_reachable.json as SQL: negation over a recursive result.
CREATE TABLE edges (src BIGINT NOT NULL, dst BIGINT NOT NULL);

CREATE VIEW closure AS
WITH RECURSIVE paths (src, dst) AS (
    SELECT src, dst FROM edges
    UNION
    SELECT p.src, e.dst FROM paths p JOIN edges e ON p.dst = e.src
)
SELECT src, dst FROM paths;

CREATE LOCAL VIEW known_nodes AS
SELECT src AS node FROM edges UNION SELECT dst AS node FROM edges;

CREATE VIEW not_reachable AS
SELECT a.node AS src, b.node AS dst
FROM known_nodes a CROSS JOIN known_nodes b
WHERE NOT EXISTS (SELECT 1 FROM closure c WHERE c.src = a.node AND c.dst = b.node);
