-- examples/circuits/sensor_windows.json as SQL: a 1-minute average per sensor and
-- sessions with a 2-minute gap; rows may arrive 30 seconds late.
CREATE TABLE readings (
    sensor VARCHAR NOT NULL,
    ts TIMESTAMP NOT NULL LATENESS INTERVAL '30' SECONDS,
    value DOUBLE
);

CREATE VIEW sensor_averages AS
SELECT sensor, window_start, window_end, AVG(value) AS avg_value, COUNT(*) AS readings
FROM TABLE(TUMBLE(TABLE readings, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY sensor, window_start, window_end;

CREATE VIEW sensor_sessions AS
SELECT sensor, window_start, window_end, COUNT(*) AS readings
FROM TABLE(SESSION(TABLE readings, DESCRIPTOR(ts), DESCRIPTOR(sensor), INTERVAL '2' MINUTES))
GROUP BY sensor, window_start, window_end;
