"""How long signing in takes, as a person sees it, on a quiet and on a busy machine.

    .venv/bin/python -m bench.sign_in --tries 10 --busy 0 2

Sets up a throwaway SQLite database (migrated) with one user, starts uvicorn (the ASGI
app, one process) on loopback, and for each `--busy` level starts that many CPU-bound
processes (a busy loop each, as `stress-ng --cpu N`), then measures `--tries` times:
- `login`: POST /api/auth/login/ alone (the password check);
- `login beside reads`: the same while 4 clients keep reading /api/auth/me/ and the
  circuit list (what the page asks for as it loads), and those reads' p99;
- `sign-in in Chromium`: Debian's Chromium (Playwright) opens /, fills the form, clicks
  Sign in, until the page shows the user's name, from a new browser context each time.
It prints the median and max of each, the password hasher and its cost. Bounded by
`--tries`; loopback only. The result is checked: each login answered 200 with the user's
name, each page showed it.
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "a long enough passphrase"


def busy_loop() -> None:
    while True:
        pass


def prepare(env: dict) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("signer", password=PASSWORD)


def login_once(base: str) -> float:
    import httpx

    with httpx.Client(base_url=base, timeout=120) as client:
        client.get("/api/auth/me/")  # the CSRF cookie, as the page gets it
        started = time.perf_counter()
        answer = client.post("/api/auth/login/", json={"username": "signer", "password": PASSWORD},
                             headers={"X-CSRFToken": client.cookies["csrftoken"]})
        took = time.perf_counter() - started
    assert answer.status_code == 200 and answer.json()["username"] == "signer", answer.text
    return took


async def beside_reads(base: str, tries: int) -> tuple[list[float], list[float]]:
    import httpx

    logins, reads, stop = [], [], asyncio.Event()

    async def reader():
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            while not stop.is_set():
                for path in ("/api/auth/me/", "/api/circuits/"):
                    started = time.perf_counter()
                    answer = await client.get(path)
                    assert answer.status_code == 200, answer.text
                    reads.append(time.perf_counter() - started)

    tasks = [asyncio.create_task(reader()) for _ in range(4)]
    try:
        for _ in range(tries):
            logins.append(await asyncio.to_thread(login_once, base))
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    return logins, reads


def in_chromium(base: str, tries: int) -> list[float]:
    from playwright.sync_api import expect, sync_playwright

    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"), headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        for _ in range(tries):
            context = browser.new_context(base_url=base, viewport={"width": 1440, "height": 900})
            page = context.new_page()
            started = time.perf_counter()
            page.goto("/")
            page.get_by_test_id("login-username").fill("signer")
            page.get_by_test_id("login-password").fill(PASSWORD)
            page.get_by_test_id("login-submit").click()
            expect(page.get_by_test_id("current-user")).to_have_text("signer", timeout=120_000)
            out.append(time.perf_counter() - started)
            context.close()
        browser.close()
    return out


def summary(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(len(xs) * 0.99))]
    return f"median {statistics.median(xs) * 1000:7.0f} ms  max {xs[-1] * 1000:7.0f} ms  p99 {p99 * 1000:7.0f} ms  (n={len(xs)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 2], help="CPU-bound processes beside the server")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dbspweb-sign-in-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "dbspweb.settings", "DATABASE_URL": "", "SQLITE_PATH": str(tmp / "db.sqlite3"),
           "DBSPWEB_VAR_DIR": str(tmp), "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING",
           "DBSPWEB_THROTTLE_LOGIN": "off", "DBSPWEB_THROTTLE_ANON": "off"}
    prepare(env)
    from django.contrib.auth.hashers import get_hasher

    hasher = get_hasher()
    cost = {k: getattr(hasher, k) for k in ("iterations", "time_cost", "memory_cost", "parallelism") if hasattr(hasher, k)}
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
        print(f"sign-in: uvicorn (1 process) + SQLite; hasher {hasher.algorithm} {cost}; {os.cpu_count()} cores; "
              f"load average before: {os.getloadavg()[0]:.2f}")
        login_once(base)  # warm
        for busy in args.busy:
            burners = [multiprocessing.Process(target=busy_loop, daemon=True) for _ in range(busy)]
            for b in burners:
                b.start()
            try:
                alone = [login_once(base) for _ in range(args.tries)]
                logins, reads = asyncio.run(beside_reads(base, args.tries))
                chromium = in_chromium(base, args.tries)
            finally:
                for b in burners:
                    b.terminate()
            print(f"busy processes: {busy}")
            print(f"  login                    {summary(alone)}")
            print(f"  login beside reads       {summary(logins)}")
            print(f"  reads beside the logins  {summary(reads)}")
            print(f"  sign-in in Chromium      {summary(chromium)}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
