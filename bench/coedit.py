"""Twenty editors on one shared document (issue 29): the time from an edit to every other
editor seeing it, and the server's memory over time.

    REDIS_URL=redis://127.0.0.1:6379/N CHANNELS_PREFIX=p-NAME .venv/bin/python -m bench.coedit --editors 20 --seconds 600

Sets up a throwaway SQLite database (migrated) with one user, a token and the big_orders
circuit, starts uvicorn (the ASGI app, one process, the Redis channel layer) on loopback,
and connects `--editors` clients to `ws/circuits/<id>/doc` as the browser's y-websocket
provider does: each a pycrdt document speaking the y-websocket sync protocol. Each editor
sets its own parameter of the node "big" (`e<n>` = its edit number) every `--interval`
seconds, at a random phase; each receiver notes when it first sees each edit number of each
other editor (an update that skips numbers counts for every number it skipped). The
latency of an edit to one receiver is from the sender's send to that receiver's seeing it
(one process, one clock); the p50/p99/max are over every (edit, receiver) pair, and "to
all" takes each edit's slowest receiver. The server's resident memory (/proc) is sampled
every 5 s. Checked at the end: every editor's document and the document the database holds
(read anew, as a restarted server would) have each editor's last edit number.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def prepare(env: dict) -> tuple[int, str]:
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from circuits import services
    from tests.conftest import example

    user = get_user_model().objects.create_user("editor", password="a long enough passphrase")
    circuit = services.create_circuit(user, "Bench", "", "private", example("big_orders"))
    return circuit.pk, Token.objects.create(user=user).key


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Editor:
    def __init__(self, n: int, socket):
        from pycrdt import Doc

        self.n = n
        self.socket = socket
        self.doc = Doc()
        self.seq = 0
        self.seen: dict[int, int] = {}  # editor -> highest edit number seen
        self.synced = asyncio.Event()

    def params(self):
        from pycrdt import Map

        return self.doc.get("nodes", type=Map)["big"]["params"]

    async def listen(self, sent: dict, latencies: dict, editors: int) -> None:
        from pycrdt import YMessageType, YSyncMessageType, handle_sync_message

        async for message in self.socket:
            if not isinstance(message, bytes) or message[0] != YMessageType.SYNC:
                continue
            reply = handle_sync_message(message[1:], self.doc)
            if reply is not None:
                await self.socket.send(reply)
            if message[1] == YSyncMessageType.SYNC_STEP2:
                self.synced.set()
            if not self.synced.is_set():
                continue
            now = time.perf_counter()
            params = self.params()
            for other in range(editors):
                if other == self.n:
                    continue
                value = params.get(f"e{other}")
                if value is None:
                    continue
                got = int(value)
                for seq in range(self.seen.get(other, 0) + 1, got + 1):
                    if (other, seq) in sent:
                        latencies.setdefault((other, seq), []).append(now - sent[(other, seq)])
                self.seen[other] = max(self.seen.get(other, 0), got)

    async def edit(self, sent: dict) -> None:
        from pycrdt import create_update_message

        self.seq += 1
        updates = []
        subscription = self.doc.observe(lambda event: updates.append(event.update))
        with self.doc.transaction():
            self.params()[f"e{self.n}"] = str(self.seq)
        self.doc.unobserve(subscription)
        sent[(self.n, self.seq)] = time.perf_counter()
        for update in updates:
            await self.socket.send(create_update_message(update))


async def run(base: str, circuit_id: int, token: str, server_pid: int, args) -> dict:
    from pycrdt import create_sync_message
    from websockets.asyncio.client import connect

    url = base.replace("http://", "ws://") + f"/ws/circuits/{circuit_id}/doc?token={token}"
    sockets = [await connect(url, origin=base, open_timeout=60, max_size=None) for _ in range(args.editors)]
    editors = [Editor(n, s) for n, s in enumerate(sockets)]
    sent: dict = {}
    latencies: dict = {}
    listeners = [asyncio.create_task(e.listen(sent, latencies, args.editors)) for e in editors]
    for e in editors:
        await e.socket.send(create_sync_message(e.doc))
    await asyncio.wait_for(asyncio.gather(*[e.synced.wait() for e in editors]), 60)
    memory = [(0.0, rss_kib(server_pid))]
    started = time.perf_counter()

    async def keep_editing(e: Editor):
        await asyncio.sleep(random.uniform(0, args.interval))
        while time.perf_counter() - started < args.seconds:
            await e.edit(sent)
            await asyncio.sleep(args.interval)

    async def sample_memory():
        while time.perf_counter() - started < args.seconds:
            await asyncio.sleep(5)
            memory.append((time.perf_counter() - started, rss_kib(server_pid)))

    await asyncio.gather(*[keep_editing(e) for e in editors], sample_memory())
    last = {e.n: e.seq for e in editors}
    # Until every editor has seen every other's last edit (or 30 s: then it is reported).
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline and not all(e.seen.get(o, 0) == last[o] for e in editors for o in last if o != e.n):
        await asyncio.sleep(0.05)
    missing = sum(1 for e in editors for o in last if o != e.n and e.seen.get(o, 0) != last[o])
    finals = [{o: e.params().get(f"e{o}") for o in last} for e in editors]
    for task in listeners:
        task.cancel()
    for s in sockets:
        await s.close()
    return {"sent": sent, "latencies": latencies, "memory": memory, "last": last, "missing": missing, "finals": finals}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--editors", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between one editor's edits")
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL"):
        sys.exit("REDIS_URL is needed (the channel layer): REDIS_URL=redis://127.0.0.1:6379/N")
    tmp = Path(tempfile.mkdtemp(prefix="dbspweb-coedit-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DATABASE_URL": "", "SQLITE_PATH": str(tmp / "db.sqlite3"),
           "DBSPWEB_VAR_DIR": str(tmp), "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING",
           "PYTHONPATH": str(ROOT)}
    circuit_id, token = prepare(env)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    log = open(tmp / "uvicorn.log", "w")
    server = subprocess.Popen([str(Path(sys.executable).parent / "uvicorn"), "dbspweb.asgi:application", "--host", "127.0.0.1",
                               "--port", str(port), "--log-level", "warning", "--no-access-log"],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        import httpx

        for _ in range(600):
            try:
                if httpx.get(f"{base}/api/auth/me/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        load_before = os.getloadavg()
        out = asyncio.run(run(base, circuit_id, token, server.pid, args))
        load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(30)

    pairs = [x for xs in out["latencies"].values() for x in xs]
    to_all = [max(xs) for xs in out["latencies"].values() if len(xs) == args.editors - 1]
    # Checked against a recomputation: each editor's last number, in every copy and in the database.
    from pycrdt import Map

    from circuits.collab import store
    from circuits.models import Circuit

    stored, _ = store.load(Circuit.objects.get(pk=circuit_id))
    stored_params = stored.get("nodes", type=Map)["big"]["params"]
    expected = {o: str(seq) for o, seq in out["last"].items()}
    copies_agree = all(f == expected for f in out["finals"])
    stored_agrees = all(stored_params.get(f"e{o}") == v for o, v in expected.items())
    memory = out["memory"]
    print(f"coedit: {args.editors} editors, one edit each every {args.interval:g} s for {args.seconds:g} s; uvicorn (1 process), "
          f"Redis channel layer, SQLite; {os.cpu_count()} cores; load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(f"edits sent: {len(out['sent'])}; (edit, receiver) pairs seen: {len(pairs)}; not seen at the end: {out['missing']}")
    print(f"edit -> one other editor: p50 {statistics.median(pairs) * 1000:.1f} ms, p99 {pct(pairs, 0.99) * 1000:.1f} ms, "
          f"max {max(pairs) * 1000:.1f} ms")
    print(f"edit -> all {args.editors - 1} others: p50 {statistics.median(to_all) * 1000:.1f} ms, p99 {pct(to_all, 0.99) * 1000:.1f} ms, "
          f"max {max(to_all) * 1000:.1f} ms ({len(to_all)} edits)")
    marks = [memory[0], memory[len(memory) // 4], memory[len(memory) // 2], memory[3 * len(memory) // 4], memory[-1]]
    print("server RSS: " + ", ".join(f"{t:.0f} s {kib / 1024:.1f} MiB" for t, kib in marks))
    print(f"checked: every copy has each editor's last edit: {copies_agree}; the stored document too: {stored_agrees}")
    if not (copies_agree and stored_agrees and out["missing"] == 0):
        sys.exit("the copies disagree: see above")


if __name__ == "__main__":
    main()
