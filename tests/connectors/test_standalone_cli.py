"""`python -m dbsp run VIEWS.sql` with the connectors the SQL declares, as a user runs it:
a subprocess with no Django settings, database, Redis or Celery in its environment.
Its sinks are compared with plain Python over every record at once (no engine code),
after clean runs, a kill -9 mid-stream and a restart, and a bad record."""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.kafka_cluster import MockKafka

pytestmark = pytest.mark.one_backend  # no database in its subject: run once, on SQLite

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 600  # the suite's one wait for a process on a busy machine (never a result's deadline)


def env() -> dict:
    """The shell of a user of the command line: none of the server's settings."""
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("DJANGO", "DATABASE", "REDIS", "CELERY", "CHANNELS"))}
    return {**keep, "PYTHONPATH": str(ROOT)}


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dbsp", "run", *map(str, args)], cwd=cwd, env=env(),
                          capture_output=True, text=True, timeout=TIMEOUT)


def views_sql(source: dict, sink: dict | None = None) -> str:
    """orders -> big_orders (a filter) and totals (a sum and count per customer)."""
    def connectors(entries):
        return json.dumps(entries).replace("'", "''")

    sinks = sink or {}
    return (f"CREATE TABLE orders (id BIGINT NOT NULL, customer VARCHAR, amount BIGINT) "
            f"WITH ('connectors' = '{connectors([source])}');\n"
            f"CREATE VIEW big_orders WITH ('connectors' = '{connectors(sinks.get('big_orders', []))}') "
            f"AS SELECT * FROM orders WHERE amount > 100;\n"
            f"CREATE VIEW totals WITH ('connectors' = '{connectors(sinks.get('totals', []))}') "
            f"AS SELECT customer, SUM(amount) AS total, COUNT(*) AS orders FROM orders GROUP BY customer;\n")


def oracle(changes: list[tuple[dict, int]]) -> dict[str, Counter]:
    """The views over every change at once, in plain Python: row (sorted items) -> weight."""
    orders = Counter()
    for row, weight in changes:
        orders[tuple(sorted(row.items()))] += weight
    orders = +orders
    big = Counter({row: w for row, w in orders.items() if dict(row)["amount"] > 100})
    per = {}
    for row, w in orders.items():
        r = dict(row)
        total, count = per.get(r["customer"], (0, 0))
        per[r["customer"]] = (total + r["amount"] * w, count + w)
    totals = Counter({tuple(sorted({"customer": c, "total": t, "orders": n}.items())): 1 for c, (t, n) in per.items() if n})
    return {"big_orders": big, "totals": totals}


def integrated(lines: list[bytes]) -> Counter:
    """A sink's insert/delete records summed."""
    out = Counter()
    for line in lines:
        record = json.loads(line)
        key = "insert" if "insert" in record else "delete"
        out[tuple(sorted(record[key].items()))] += 1 if key == "insert" else -1
    return +out


def sink_files(folder: Path, view: str) -> dict[int, list[bytes]]:
    return {int(p.stem.rsplit("-", 1)[1]): p.read_bytes().splitlines() for p in sorted(folder.glob(f"{view}-*.jsonl"))}


def orders(first: int, count: int) -> list[dict]:
    names = ["ada", "grace", "linus", "barbara"]
    return [{"id": i, "customer": names[i % 4], "amount": (i * 37) % 250} for i in range(first, first + count)]


def write_csv(path: Path, rows: list[dict], weights: list[int] | None = None) -> None:
    lines = ["id,customer,amount,_weight"] + [f"{r['id']},{r['customer']},{r['amount']},{w}"
                                              for r, w in zip(rows, weights or [1] * len(rows))]
    path.write_text("\n".join(lines) + "\n")


def file_circuit(tmp_path: Path, fmt: str = "csv") -> tuple[Path, Path, Path]:
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    inbox.mkdir()
    sql = tmp_path / "views.sql"
    sql.write_text(views_sql(
        {"name": "orders-in", "transport": {"name": "file_input", "config": {"path": str(inbox)}},
         "format": {"name": "csv"} if fmt == "csv" else {"name": "json", "config": {"update_format": "insert_delete"}}},
        {view: [{"name": f"{view}-out", "transport": {"name": "file_output", "config": {"path": str(out)}}}]
         for view in ("big_orders", "totals")}))
    return sql, inbox, out


def test_a_folder_of_csv_files_to_file_sinks_until_idle(tmp_path):
    sql, inbox, out = file_circuit(tmp_path)
    changes = []
    for n in range(3):
        rows = orders(n * 10, 10)
        write_csv(inbox / f"{n:02d}.csv", rows)
        changes += [(r, 1) for r in rows]
    deleted = orders(0, 3)  # a later file deletes rows of the first
    write_csv(inbox / "03.csv", deleted, [-1] * 3)
    changes += [(r, -1) for r in deleted]

    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    ticks = [json.loads(line)["tick"] for line in result.stdout.splitlines()]
    assert ticks == [0, 1, 2, 3]  # one tick per file (each fits one batch)
    expected = oracle(changes)
    for view in ("big_orders", "totals"):
        files = sink_files(out, view)
        assert set(files) <= set(ticks)  # a tick whose delta of the view is empty writes no file
        assert integrated([line for t in sorted(files) for line in files[t]]) == expected[view]
    assert "every source drained at tick 3" in result.stderr
    state = json.loads((tmp_path / ".dbsp-state" / "views" / "state.json").read_text())
    assert state["tick"] == 3 and state["sinks"] == {"big_orders-out": 3, "totals-out": 3}

    # run again: everything was applied, nothing is pushed or written twice
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    again = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "" and "resumed after tick 3" in again.stderr
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


def run_until_ticks(args: list, cwd: Path, ticks: int) -> tuple[subprocess.Popen, list[str]]:
    """The command line started without --until-idle; returns once it printed `ticks` tick lines."""
    proc = subprocess.Popen([sys.executable, "-m", "dbsp", "run", *map(str, args)], cwd=cwd, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, seen = [], threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if len(lines) >= ticks:
                seen.set()
        seen.set()

    threading.Thread(target=read, daemon=True).start()
    assert seen.wait(TIMEOUT) and len(lines) >= ticks, proc.stderr.read() if proc.poll() is not None else "no ticks"
    return proc, lines


def test_kill_9_mid_stream_then_a_restart_leaves_the_sinks_exactly_as_the_records_say(tmp_path):
    sql, inbox, out = file_circuit(tmp_path, fmt="json")
    sql.write_text(sql.read_text().replace('"file_input", "config": {', '"file_input", "config": {"max_batch": 2, '))
    changes = []
    for n in range(40):  # 40 files of 10 records: 5 ticks a file (max_batch 2), 200 ticks: killed well before the end
        rows = orders(n * 10, 10)
        (inbox / f"{n:02d}.jsonl").write_text("".join(json.dumps({"insert": r}) + "\n" for r in rows))
        changes += [(r, 1) for r in rows]

    proc, first_lines = run_until_ticks([sql, "--backend", "reference"], tmp_path, 5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(TIMEOUT)
    first_ticks = [json.loads(line)["tick"] for line in first_lines if line.endswith("\n")]
    state = json.loads((tmp_path / ".dbsp-state" / "views" / "state.json").read_text())
    assert state["tick"] >= first_ticks[-1] >= 4
    print(f"killed -9 after tick {state['tick']} of 200")  # (mid-stream in every run seen; not asserted: a timing)

    for n in range(40, 43):  # the stream goes on while it is down: more files, and deletes
        rows = orders(n * 10, 10)
        (inbox / f"{n:02d}.jsonl").write_text("".join(json.dumps({"insert": r}) + "\n" for r in rows))
        changes += [(r, 1) for r in rows]
    gone = orders(20, 5)
    (inbox / "43.jsonl").write_text("".join(json.dumps({"delete": r}) + "\n" for r in gone))
    changes += [(r, -1) for r in gone]

    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"resumed after tick {state['tick']}" in result.stderr
    second_ticks = [json.loads(line)["tick"] for line in result.stdout.splitlines()]
    assert second_ticks == list(range(state["tick"] + 1, state["tick"] + 1 + len(second_ticks)))
    last = second_ticks[-1]
    assert last == 43 * 5 + 3 - 1  # 43 files of 5 ticks, then 5 deletes in 3: ticks 0..217
    expected = oracle(changes)
    for view in ("big_orders", "totals"):
        files = sink_files(out, view)
        assert all(t <= last for t in files)
        assert integrated([line for t in sorted(files) for line in files[t]]) == expected[view], view
    log = (tmp_path / ".dbsp-state" / "views" / "pushes.jsonl").read_text().splitlines()
    assert [json.loads(line)["tick"] for line in log] == list(range(last + 1))  # each tick logged once


def test_a_bad_record_exits_1_naming_the_connector_its_position_and_the_column(tmp_path):
    sql, inbox, out = file_circuit(tmp_path)
    write_csv(inbox / "01.csv", orders(3, 3))  # amounts 111, 148, 185: in big_orders
    (inbox / "02.csv").write_text("id,customer,amount\n10,ada,5\n11,grace,lots\n")

    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)

    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "connector 'orders-in' (file_source) at 02.csv:3, column 'amount': expected an integer (bigint), got 'lots'")
    assert [json.loads(line)["tick"] for line in result.stdout.splitlines()] == [0]  # the good file's tick, no more
    state = json.loads((tmp_path / ".dbsp-state" / "views" / "state.json").read_text())
    assert state["tick"] == 0 and state["positions"]["orders-in"] == {"after": "01.csv"}
    assert sorted(p.name for p in out.iterdir()) == ["big_orders-000000000000.jsonl", "totals-000000000000.jsonl"]


def test_a_record_the_input_check_refuses_names_its_line(tmp_path):
    """The value check and the delete check of the command line (dbsp/inputs.py), named as the server names them."""
    sql, inbox, _ = file_circuit(tmp_path, fmt="json")
    (inbox / "01.jsonl").write_text(json.dumps({"insert": {"id": 1, "customer": "ada", "amount": 7}}) + "\n" +
                                    json.dumps({"insert": {"id": 2, "customer": "ada", "amount": 2 ** 63}}) + "\n")
    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"connector 'orders-in' \(file_source\) at 01\.jsonl:2, column 'amount': 9223372036854775808 is out of the bigint range", last), last
    assert result.stdout == ""

    (inbox / "01.jsonl").write_text(json.dumps({"delete": {"id": 9, "customer": "bo", "amount": 1}}) + "\n")
    result = cli(sql, "--until-idle", "--backend", "reference", "--state", tmp_path / "other", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("connector 'orders-in' (file_source) at 01.jsonl:1")
    assert "delete" in result.stderr


def kafka_sink_rows(kafka: MockKafka, topic: str) -> tuple[list[int], Counter]:
    messages = kafka.read_committed(topic, timeout=30)
    return [tick for tick, _ in messages], integrated([value for _, value in messages])


def test_kafka_source_and_sink_across_a_kill_9(tmp_path, kafka: MockKafka):
    """The mock cluster lives in this process; the command line reaches it at its bootstrap address."""
    topic = f"cli-orders-{tmp_path.name}"  # the cluster is the session's: topics of this test's own
    source = {"name": "orders-kafka", "transport": {"name": "kafka_input", "config": {
        "bootstrap.servers": kafka.bootstrap, "topic": topic, "start_from": "earliest", "max_batch": 7}},
        "format": {"name": "json", "config": {"update_format": "insert_delete"}}}
    sinks = {view: [{"name": f"{view}-kafka", "transport": {"name": "kafka_output", "config": {
        "bootstrap.servers": kafka.bootstrap, "topic": f"{topic}-{view}"}}}] for view in ("big_orders", "totals")}
    sql = tmp_path / "views.sql"
    sql.write_text(views_sql(source, sinks))
    first = orders(0, 60)
    # one partition: a delete must come after its insert (across partitions the order is not kept)
    kafka.produce(topic, [{"insert": r} for r in first], partition=0)

    proc, _ = run_until_ticks([sql, "--backend", "reference"], tmp_path, 3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(TIMEOUT)

    more, gone = orders(60, 20), orders(10, 10)
    kafka.produce(topic, [{"insert": r} for r in more] + [{"delete": r} for r in gone], partition=0)
    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert re.search(r"resumed after tick [2-9]", result.stderr), result.stderr  # the first run's ticks were kept
    expected = oracle([(r, 1) for r in first + more] + [(r, -1) for r in gone])
    state = json.loads((tmp_path / ".dbsp-state" / "views" / "state.json").read_text())
    for view in ("big_orders", "totals"):
        ticks, rows = kafka_sink_rows(kafka, f"{topic}-{view}")
        assert rows == expected[view], view
        # each tick's messages once, in tick order: a tick written twice would show up again later
        runs = [t for i, t in enumerate(ticks) if i == 0 or ticks[i - 1] != t]
        assert runs == sorted(set(runs)), runs
        assert state["sinks"][f"{view}-kafka"] == state["tick"]


def test_the_readme_command_works_on_a_fresh_checkout(tmp_path):
    """The README's one command to try a connector, run as written (from a checkout's root:
    here a fresh folder holding the example and the environment)."""
    readme = (ROOT / "README.md").read_text()
    [command] = re.findall(r"^\s*(\.venv/bin/python -m dbsp run examples/connectors/\S+\.sql[^\n`]*)$", readme, re.M)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "connectors").symlink_to(ROOT / "examples" / "connectors")
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    sink = Path("/tmp/dbsp-orders")  # where the example writes
    for p in sink.glob("*.jsonl"):
        p.unlink()

    result = subprocess.run(shlex.split(command), cwd=tmp_path, env=env(), capture_output=True, text=True,
                            timeout=TIMEOUT)

    assert result.returncode == 0, result.stderr
    changes = []
    for path in sorted((ROOT / "examples" / "connectors" / "orders").glob("*.csv")):
        header, *lines = path.read_text().splitlines()
        names = header.split(",")
        for line in lines:
            record = dict(zip(names, line.split(",")))
            row = {"id": int(record["id"]), "customer": record["customer"], "amount": int(record["amount"])}
            changes.append((row, int(record.get("_weight", 1))))
    expected = oracle(changes)
    ticks = [json.loads(line)["tick"] for line in result.stdout.splitlines()]
    assert ticks == list(range(len(list((ROOT / "examples" / "connectors" / "orders").glob("*.csv")))))
    for view in ("big_orders", "totals"):
        files = sink_files(sink, view)
        assert integrated([line for t in sorted(files) for line in files[t]]) == expected[view], view


def test_the_connector_clients_import_without_django():
    code = ("import sys, connectors.standalone; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'runs', 'circuits', 'workers', 'redis_lock',"
            " 'celery', 'rest_framework'}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(), capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_tick_logged_but_not_committed_is_cut_off_on_restart(tmp_path):
    """A crash between the log's append and state.json's rename: the logged line past the
    committed tick (and a torn one) never happened; the source reads those records again."""
    sql, inbox, out = file_circuit(tmp_path)
    rows = orders(3, 5)
    write_csv(inbox / "01.csv", rows)
    assert cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path).returncode == 0
    log = tmp_path / ".dbsp-state" / "views" / "pushes.jsonl"
    ghost = {"insert": {"id": 999, "customer": "ghost", "amount": 500}}
    with open(log, "a") as f:
        f.write(json.dumps({"tick": 1, "pushes": {"orders": [ghost]}}) + "\n" + '{"tick": 2, "pus')
    more = orders(40, 5)
    write_csv(inbox / "02.csv", more)

    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["tick"] for line in result.stdout.splitlines()] == [1]
    assert [json.loads(line)["tick"] for line in log.read_text().splitlines()] == [0, 1]
    expected = oracle([(r, 1) for r in rows + more])
    for view in ("big_orders", "totals"):
        files = sink_files(out, view)
        assert integrated([line for t in sorted(files) for line in files[t]]) == expected[view], view


def test_ctrl_c_stops_cleanly_and_the_next_run_resumes(tmp_path):
    sql, inbox, out = file_circuit(tmp_path)
    rows = orders(0, 8)
    write_csv(inbox / "01.csv", rows)
    proc, _ = run_until_ticks([sql, "--backend", "reference"], tmp_path, 1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(TIMEOUT) == 0
    assert "stopped after tick 0" in proc.stderr.read()

    more = orders(8, 8)
    write_csv(inbox / "02.csv", more)
    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["tick"] for line in result.stdout.splitlines()] == [1]
    expected = oracle([(r, 1) for r in rows + more])
    files = sink_files(out, "totals")
    assert integrated([line for t in sorted(files) for line in files[t]]) == expected["totals"]


def test_parquet_and_delta_sinks_take_the_view_schema_from_the_plan(tmp_path):
    """The sinks that type their columns by the view's schema read it from the command line's
    plan (the server's read the run's circuit version from the database)."""
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    rows = orders(0, 20)
    write_csv(inbox / "01.csv", rows[:12])
    write_csv(inbox / "02.csv", rows[12:] + rows[:4], [1] * 8 + [-1] * 4)
    sql = tmp_path / "views.sql"
    sql.write_text(views_sql(
        {"name": "orders-in", "transport": {"name": "file_input", "config": {"path": str(inbox)}}, "format": {"name": "csv"}},
        {"big_orders": [{"name": "big-parquet", "transport": {"name": "file_output", "config": {
            "path": str(tmp_path / "parquet"), "format": "parquet"}}}],
         "totals": [{"name": "totals-delta", "transport": {"name": "delta_output", "config": {
             "path": str(tmp_path / "delta"), "mode": "table", "key": "customer"}}}]}))

    result = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    expected = oracle([(r, 1) for r in rows] + [(r, -1) for r in rows[:4]])
    big = Counter()
    for path in sorted((tmp_path / "parquet").glob("big_orders-*.parquet")):
        for record in pq.read_table(path).to_pylist():
            weight = record.pop("weight")
            big[tuple(sorted(record.items()))] += weight
    assert +big == expected["big_orders"]
    table = DeltaTable(str(tmp_path / "delta")).to_pyarrow_table().to_pylist()
    assert Counter(tuple(sorted((k, v) for k, v in r.items() if k in ("customer", "total", "orders"))) for r in table) \
        == expected["totals"]


def test_a_declaration_the_kinds_refuse_is_named_before_anything_runs(tmp_path):
    sql = tmp_path / "views.sql"
    sql.write_text(views_sql({"name": "orders-in", "transport": {"name": "ftp_input", "config": {"path": "/x"}}}))
    result = cli(sql, "--until-idle", cwd=tmp_path)
    assert result.returncode == 1
    assert re.match(r"views\.sql:1:\d+: connector 1 of orders: unknown transport 'ftp_input' \(transports: .*file_input",
                    Path(result.stderr.strip()).name), result.stderr
    sql.write_text(views_sql({"name": "orders-in", "transport": {"name": "file_input", "config": {"path": "/x", "pth": 1}}}))
    result = cli(sql, "--until-idle", cwd=tmp_path)
    assert result.returncode == 1
    assert re.fullmatch(r"views\.sql:1:\d+: table orders: node 'orders': connectors\[0\] 'orders-in': unknown option "
                        r"'pth' for file_source \(options: columns, format, max_batch, on_error, path, pattern\)",
                        Path(result.stderr.strip()).name), result.stderr
    assert not (tmp_path / ".dbsp-state").exists()

    plain = ROOT / "examples" / "sql" / "big_orders.sql"  # no connectors: run needs a pushes file
    result = cli(plain, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("big_orders.sql: declares no connectors: give a pushes file "
                                          "(python -m dbsp run CIRCUIT PUSHES)")


def test_a_postgres_source_snapshot_then_changes_across_a_restart(tmp_path, cdc_postgres):
    """postgres_source on the command line: its schema from the plan, its slot named after
    the state folder; the snapshot, then changes made while it was down, each once."""
    import psycopg

    url = cdc_postgres.new_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA shop")
        conn.execute("CREATE TABLE shop.orders (id bigint PRIMARY KEY, customer text, amount bigint)")
        conn.execute("ALTER TABLE shop.orders REPLICA IDENTITY FULL")
        conn.cursor().executemany("INSERT INTO shop.orders VALUES (%s, %s, %s)",
                                  [(r["id"], r["customer"], r["amount"]) for r in orders(0, 30)])
    sql, _, out = file_circuit(tmp_path)
    sql.write_text(views_sql(
        {"name": "orders-pg", "transport": {"name": "postgres_input", "config": {"dsn": url, "table": "shop.orders"}}},
        {view: [{"name": f"{view}-out", "transport": {"name": "file_output", "config": {"path": str(out)}}}]
         for view in ("big_orders", "totals")}))

    first = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE shop.orders SET amount = amount + 100 WHERE id < 5")
        conn.execute("DELETE FROM shop.orders WHERE id >= 25")
        conn.cursor().executemany("INSERT INTO shop.orders VALUES (%s, %s, %s)",
                                  [(r["id"], r["customer"], r["amount"]) for r in orders(30, 10)])
    second = cli(sql, "--until-idle", "--backend", "reference", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "resumed after tick" in second.stderr and second.stdout  # the changes made ticks of their own

    with psycopg.connect(url) as conn:  # the table as it is now: what the views must integrate to
        now = [{"id": i, "customer": c, "amount": a} for i, c, a in conn.execute("SELECT * FROM shop.orders")]
    expected = oracle([(r, 1) for r in now])
    for view in ("big_orders", "totals"):
        files = sink_files(out, view)
        assert integrated([line for t in sorted(files) for line in files[t]]) == expected[view], view
    with psycopg.connect(url, autocommit=True) as conn:  # let go of the slot this test made
        for (slot,) in conn.execute("SELECT slot_name FROM pg_replication_slots WHERE database = current_database()"):
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
