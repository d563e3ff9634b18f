"""Redis Streams and NATS JetStream connectors for real: a Redis stream feeds a run in a
Celery worker, a Redis sink and a NATS sink receive two of its views' deltas, and the worker
holding the run is killed with SIGKILL in mid-stream. The survivor takes the run over and
its connectors with it. Afterwards the input log holds every record exactly once, each
sink holds each tick's delta exactly once (what the tick stored), and the sinks' contents
integrate to what the reference evaluator computes from all the records at once."""
import json
import signal
import uuid
from collections import Counter

import pytest
import redis

from connectors.models import Connector
from dbsp import compile_plan
from dbsp.reference import recompute
from dbsp.zset import ZSet
from runs.models import Run, TickOutput
from tests.conftest import example
from tests.connectors import test_nats_pump as nats_peer
from tests.connectors.conftest import nats_server, pushed_rows, redis_server  # noqa: F401 - the brokers
from tests.live.test_connectors_live import expanded, integral
from tests.live.test_recovery import start_run, transaction_pushes
from workers.models import RunLease

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def test_kill_9_mid_stream_redis_in_redis_and_nats_out_exactly_once(cluster, redis_server, nats_server, make_user):
    api = cluster.client(make_user("streams2"))
    run_id = start_run(api, example("transactions"))
    tag = uuid.uuid4().hex[:8]
    r = redis.Redis.from_url(redis_server.url)
    source_stream, sink_stream, subject = f"tx-{tag}", f"balance-{tag}", f"credits.{tag}"
    nats_stream = nats_peer.new_stream(nats_server.url, subject)
    records = [rec for push in transaction_pushes(600, seed=31) for rec in push]
    for rec in records[:200]:
        r.xadd(source_stream, {"value": json.dumps(rec)})
    for body in (
        {"name": "tx", "kind": "redis_source", "node": "transactions",
         "config": {"url": redis_server.url, "stream": source_stream, "max_batch": 40}},
        {"name": "balance-out", "kind": "redis_sink", "node": "balance",
         "config": {"url": redis_server.url, "stream": sink_stream}},
        {"name": "credits-out", "kind": "nats_sink", "node": "credits",
         "config": {"servers": nats_server.url, "subject": subject}},
    ):
        answer = api.post(f"/api/runs/{run_id}/connectors/", json=body)
        assert answer.status_code == 201, answer.text

    def records_in():
        return Connector.objects.get(run_id=run_id, name="tx").records_in

    for rec in records[200:]:
        r.xadd(source_stream, {"value": json.dumps(rec)})
    cluster.wait(lambda: records_in() >= 300, 120, "the source to be mid-stream")
    holder = cluster.worker_named_by(RunLease.objects.get(run_id=run_id).worker)
    cluster.kill(holder, signal.SIGKILL)
    at_kill = records_in()
    assert at_kill < len(records), "the stream ended before the kill: make it longer"

    def settled():
        run = Run.objects.get(pk=run_id)
        sinks = Connector.objects.filter(run_id=run_id, kind__endswith="_sink")
        return (records_in() == len(records) and run.current_tick >= 0
                and not run.pushes.filter(applied_tick__isnull=True).exists()
                and all(s.last_tick == run.current_tick for s in sinks))

    cluster.wait(settled, 180, "the survivor to take the stream over and drain it")
    status = api.get(f"/api/runs/{run_id}/connectors/").json()
    assert {c["name"]: c["state"] for c in status} == {"balance-out": "running", "credits-out": "running", "tx": "running"}
    assert cluster.worker_named_by(RunLease.objects.get(run_id=run_id).worker) != holder

    # The input log: every record once.
    run = Run.objects.get(pk=run_id)
    assert sum(run.pushes.values_list("row_count", flat=True)) == len(records) == records_in()
    logged = Counter()
    for row, weight in pushed_rows(run):
        logged[json.dumps(row, sort_keys=True)] += weight
    assert {k: w for k, w in logged.items() if w} == integral(json.dumps(rec) for rec in records)

    # Each sink: each tick's delta exactly once, as the tick stored it.
    ticks = {t.tick: t.deltas for t in TickOutput.objects.filter(run_id=run_id)}
    in_redis = [(int(f[b"tick"]), f[b"value"].decode()) for _, f in r.xrange(sink_stream)]
    in_nats = [(int(h["Dbspweb-Tick"]), v.decode()) for h, v in nats_peer.messages(nats_server.url, nats_stream)]
    for view, written in (("balance", in_redis), ("credits", in_nats)):
        by_tick = {}
        for tick, value in written:
            by_tick.setdefault(tick, Counter())[json.dumps(json.loads(value), sort_keys=True)] += 1
        assert by_tick == {t: expanded(d[view]) for t, d in ticks.items() if d.get(view)}, view

    # The oracle: the reference evaluator over all records at once.
    plan = compile_plan(run.version.document)
    names = plan.inputs["transactions"].names
    table = ZSet((tuple(rec[k][n] for n in names), 1 if k == "insert" else -1) for rec in records for k in rec)
    expected = recompute(plan, {"transactions": table})

    def as_texts(view):
        cols = plan.views[view].names
        return {json.dumps(dict(zip(cols, row)), sort_keys=True): w for row, w in expected[view]}

    assert integral(v for _, v in in_redis) == as_texts("balance")
    assert integral(v for _, v in in_nats) == as_texts("credits")
    print(f"killed {holder} at {at_kill}/{len(records)} records; {len(ticks)} ticks; "
          f"{len(in_redis)} Redis and {len(in_nats)} NATS sink messages")
    cluster.workers.pop(holder, None)  # the dead one is no candidate for the tests after this one
    cluster.start_worker(holder + "b")  # a second worker again for the tests after this one
