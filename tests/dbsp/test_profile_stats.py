"""What the operator profile records per node and tick: where the node ran (`path`:
row-by-row on the driver, Arrow, Spark; "reference" for the oracle) and how many Spark
jobs it started (`spark_jobs`), on each of the three paths; and for windows the late
rows of each tick and the windows each tick closed."""
import pytest

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.conftest import EXAMPLES, example

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# small thresholds so that each path is reached with a few hundred rows: fewer than 40
# rows row by row, up to 150 with Arrow, above that on Spark
SMALL = {"vector_min_rows": 40, "driver_max_rows": 60, "arrow_max_rows": 150}


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def transfers(n, start=0):
    """n transactions from n new accounts to n accounts (n - 1 of them new senders too)."""
    return [{"insert": {"id": start + i, "from_acct": start + i, "to_acct": start + i + 1, "amount": 10 + i}} for i in range(n)]


def jobs_in_group(spark, group):
    """The Spark jobs the status tracker saw in a job group (independent of the engine's count)."""
    tracker = spark.sparkContext.statusTracker()
    return len(tracker.getJobIdsForGroup(group))


def step_counted(spark, rt, records, group):
    plan = rt.plan
    spark.sparkContext.setJobGroup(group, group)
    try:
        return rt.step({"transactions": changes_from_records(records, plan.inputs["transactions"])})
    finally:
        spark.sparkContext.setJobGroup("", "")


# (the sums per account keep accumulators on the driver: by group below vector_min_rows
# touched groups, whole Arrow columns above; they have no Spark path. The join sees both
# sums' changes: 2 rows per pushed transaction)
@pytest.mark.parametrize("size,path,sums", [(10, "row", "row"), (50, "arrow", "arrow"), (300, "spark", "arrow")])
def test_each_path_is_recorded_with_its_spark_jobs(spark, size, path, sums):
    from dbsp.spark import SparkRuntime

    rt = SparkRuntime(compile_plan(example("transactions")), spark, **SMALL)
    step_counted(spark, rt, transfers(3), f"profile-warm-{size}")
    result = step_counted(spark, rt, transfers(size, start=100), f"profile-{size}")
    stats = result.stats
    assert stats["credits_by_account"]["path"] == stats["debits_by_account"]["path"] == sums
    assert stats["by_account"]["path"] == path
    assert stats["transactions"]["path"] == "row"  # a ZSet pushed: turned into Arrow row by row
    for node, s in stats.items():
        assert s["path"] in ("row", "arrow", "spark", "skipped"), (node, s)
        assert isinstance(s["spark_jobs"], int) and s["spark_jobs"] >= 0, (node, s)
    # every Spark job of the tick is attributed to the node that started it
    assert sum(s["spark_jobs"] for s in stats.values()) == jobs_in_group(spark, f"profile-{size}")
    if path == "row":
        assert all(s["spark_jobs"] == 0 for s in stats.values()), stats  # all state on the driver: no job
    if path == "spark":
        assert stats["by_account"]["spark_jobs"] > 0
    rt.close()


def test_a_linear_operator_takes_the_path_of_its_change_size(spark):
    """big_orders: a filter (Lifted, with an Arrow form) on 10, 50 and 300 rows, and on
    300 rows with Arrow switched off."""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(example("big_orders"))
    rt = SparkRuntime(plan, spark, **SMALL)
    paths, jobs = [], []
    for n, start in ((10, 0), (50, 100), (300, 1000)):
        records = [{"insert": {"id": start + i, "customer": "c", "amount": 50 + i}} for i in range(n)]
        group = f"profile-filter-{n}"
        spark.sparkContext.setJobGroup(group, group)
        stats = rt.step({"orders": changes_from_records(records, plan.inputs["orders"])}).stats
        spark.sparkContext.setJobGroup("", "")
        paths.append(stats["big"]["path"])
        jobs.append((sum(s["spark_jobs"] for s in stats.values()), jobs_in_group(spark, group)))
    # a change already on the driver stays in Arrow past arrow_max_rows (no round trip
    # through Spark); driver paths start no Spark job
    assert paths == ["row", "arrow", "arrow"]
    assert jobs[0] == jobs[1] == jobs[2] == (0, 0)
    rt.close()
    # with Arrow switched off (arrow_max_rows=0) the same change takes the Spark path
    rt = SparkRuntime(plan, spark, **(SMALL | {"arrow_max_rows": 0}))
    records = [{"insert": {"id": 5000 + i, "customer": "c", "amount": 50 + i}} for i in range(300)]
    spark.sparkContext.setJobGroup("profile-filter-spark", "profile-filter-spark")
    stats = rt.step({"orders": changes_from_records(records, plan.inputs["orders"])}).stats
    spark.sparkContext.setJobGroup("", "")
    assert stats["big"]["path"] == "spark"
    # the lazy filter is materialized by the view: counted there
    assert sum(s["spark_jobs"] for s in stats.values()) == jobs_in_group(spark, "profile-filter-spark") > 0
    rt.close()


def test_at_the_real_default_thresholds_a_small_tick_is_row_by_row_without_jobs(spark):
    from dbsp.spark import SparkRuntime

    rt = SparkRuntime(compile_plan(example("transactions")), spark)
    for start in (0, 100):
        stats = step_counted(spark, rt, transfers(10, start=start), f"profile-default-{start}").stats
        assert {s["path"] for n, s in stats.items() if n != "sum_of_balances"} <= {"row", "skipped"}
        assert sum(s["spark_jobs"] for s in stats.values()) == jobs_in_group(spark, f"profile-default-{start}") == 0
    rt.close()


def test_nodes_without_a_change_are_skipped(spark):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(example("big_orders"))
    rt = SparkRuntime(plan, spark)
    stats = rt.step({}).stats
    assert {n: s["path"] for n, s in stats.items()} == {n: "skipped" for n in plan.order}
    stats = rt.step({"orders": changes_from_records([{"insert": {"id": 1, "customer": "a", "amount": 5}}], plan.inputs["orders"])}).stats
    assert stats["big"]["path"] == "row" and stats["big"]["rows_out"] == 0
    rt.close()


def test_the_reference_evaluator_reports_its_own_path():
    plan = compile_plan(example("big_orders"))
    stats = ReferenceRuntime(plan).step({}).stats
    assert {s["path"] for s in stats.values()} == {"reference"}


# sensor_windows.pushes.jsonl by hand. per_minute: 1-minute tumbling windows, lateness 30 s;
# sessions: gap 2 minutes, lateness 30 s. Waterlines: 10:00:10, 10:02:30, 10:02:50, 10:08:30.
# tick 1: W 10:02:30 closes per_minute's (s1, 10:01), (s2, 10:01), (s1, 10:02)
# tick 2: s1 10:00:50 is late for per_minute (its window ended 10:01 <= W), not for sessions
# tick 3: W 10:08:30 closes (s2, 10:04); sessions close below W - gap = 10:06:30: s1's one
#         (ends 10:03:30) and both of s2's (10:02:20, 10:05:20)
# tick 4: the delete of s2 10:03:20 is late for both
CLOSED = {"per_minute": [0, 3, 0, 1, 0], "sessions": [0, 0, 0, 3, 0]}
LATE = {"per_minute": [0, 0, 1, 0, 1], "sessions": [0, 0, 0, 0, 1]}


@pytest.mark.parametrize("backend", ["spark", "spark-on-spark", "reference"])
def test_windows_report_late_rows_and_closed_windows_per_tick(spark, backend):
    import json

    from dbsp.spark import SparkRuntime

    plan = compile_plan(example("sensor_windows"))
    if backend == "reference":
        rt = ReferenceRuntime(plan)
    else:
        rt = SparkRuntime(plan, spark, **({"driver_max_rows": 0, "arrow_max_rows": 0} if backend == "spark-on-spark" else {}))
    closed, late = {n: [] for n in CLOSED}, {n: [] for n in LATE}
    for line in (EXAMPLES / "sensor_windows.pushes.jsonl").read_text().splitlines():
        push = json.loads(line)
        result = rt.step({"readings": changes_from_records(push["readings"], plan.inputs["readings"])})
        for node in CLOSED:
            closed[node].append(result.frontier[node]["windows_closed"])
            late[node].append(result.stats[node]["late_rows_tick"])
    assert closed == CLOSED
    assert late == LATE


def test_window_progress_survives_a_snapshot(spark, tmp_path):
    """A run resumed from a snapshot (another worker) goes on counting closed windows and
    this tick's late rows from where it was."""
    import json

    from dbsp.spark import SparkRuntime

    plan = compile_plan(example("sensor_windows"))
    pushes = [json.loads(line)["readings"] for line in (EXAMPLES / "sensor_windows.pushes.jsonl").read_text().splitlines()]
    rt = SparkRuntime(plan, spark)
    for records in pushes[:2]:
        rt.step({"readings": changes_from_records(records, plan.inputs["readings"])})
    rt.snapshot(tmp_path)
    resumed = SparkRuntime.restore(plan, tmp_path, session=spark)
    closed, late = [], []
    for records in pushes[2:]:
        result = resumed.step({"readings": changes_from_records(records, plan.inputs["readings"])})
        closed.append(result.frontier["sessions"]["windows_closed"])
        late.append(result.stats["per_minute"]["late_rows_tick"])
    assert closed == CLOSED["sessions"][2:] and late == LATE["per_minute"][2:]
