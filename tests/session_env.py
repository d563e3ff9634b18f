"""The test session's environment, set before pytest-django reads the settings (loaded
with `-p tests.session_env` from pytest.ini): development mode, as ./scripts/run asks
for it, since the settings default DJANGO_DEBUG to off (which needs DJANGO_SECRET_KEY).
The processes the tests start (live servers, workers) inherit it. Tests of the default
itself run the settings in a subprocess without it (tests/test_settings.py,
tests/test_server_errors.py).

The Spark JVMs of the suite (the session's own and every worker's: spark-submit adds
SPARK_SUBMIT_OPTS to the driver's command line) compile with the C1 JIT only and collect
with the serial GC. The suite's JVMs run thousands of small, different jobs each and
live minutes, where C2's compilations and G1's parallel GC threads cost more CPU than
they give back: measured on this 2-core machine (bench/README.md is for the product's
speed; this is the suite's), `tests/dbsp/test_sql_oracle.py -k "all-spark and (extremes
or joins)"`, the JVM's CPU seconds / wall seconds: 143 / 84 by default, 102 / 80 with C1
only, 90 / 75 with C1 and the serial GC. A deployment keeps the JVM's defaults (long-lived
workers, where C2 pays). Set SPARK_SUBMIT_OPTS to run the suite with other options."""
import os

os.environ.setdefault("DJANGO_DEBUG", "1")
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
