"""A started worker warms the JVM's code for ticks over Spark-held state, in the
background, after it reports ready (workers/tasks.py warm_spark)."""
import re
import time

import pytest

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def test_a_started_worker_warms_its_spark_lookups_in_the_background(live_stack):
    log = live_stack.log_dir / "worker.log"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and "event=spark_warm_up" not in log.read_text():
        time.sleep(0.5)
    text = log.read_text()
    assert "event=spark_warm_up_failed" not in text, text[-4000:]
    found = re.search(r"event=spark_warm_up ticks=(\d+) jobs=(\d+) seconds=([\d.]+)", text)
    assert found, text[-4000:]
    assert int(found[1]) == 40 and int(found[2]) >= 40
    assert text.index("Spark session ready") < found.start()  # ready first: the warm-up delays nothing
