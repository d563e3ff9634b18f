-- examples/circuits/word_count.json as SQL. SPLIT keeps empty pieces (two spaces in a
-- row) in SQL while the engine's split drops them, so the view says `word <> ''`.
CREATE TABLE lines (id BIGINT NOT NULL, text VARCHAR);

CREATE VIEW counts AS
SELECT word, COUNT(*) AS n
FROM lines CROSS JOIN UNNEST(SPLIT(text, ' ')) AS w(word)
WHERE word <> ''
GROUP BY word;
