"""The first load of the app on a cold cache, in Debian's Chromium (Playwright, never a
downloaded browser), against a running server:

    .venv/bin/python -m bench.cold_load --url http://127.0.0.1:8000 --user demo --password demo \\
        --circuit 1 --run 1 [--mbps 10 --latency-ms 40]

For each page (the login page, the circuit list, the editor of --circuit, the dashboard of
--run) a fresh browser context with an empty cache opens it over a throttled link (CDP
network emulation) and records the bytes on the wire (encoded), the bytes after decoding,
the number of requests and the time until the page's first meaningful element shows.
Each page is measured as served (brotli) and with `Accept-Encoding: identity` (what an
uncompressed server sends). Loopback only; nothing is written to the server.
"""
from __future__ import annotations

import argparse
import os
import time

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]

PAGES = [
    # name, hash route (None: stay signed out), what shows when the page is ready
    ("login", None, "login-username"),
    ("circuit list", "#/", "circuit-item"),
    ("editor", "#/circuits/{circuit}", "circuit-node"),
    ("dashboard", "#/runs/{run}", "view-row"),
]


def measure(browser, args, name, route, ready, identity):
    context = browser.new_context(base_url=args.url, viewport={"width": 1440, "height": 900})
    page = context.new_page()
    if route is not None:  # sign in through the API (its cookies), outside the measurement
        response = context.request.get("/api/auth/me/")
        token = next(c["value"] for c in context.cookies() if c["name"] == "csrftoken")
        response = context.request.post("/api/auth/login/", data={"username": args.user, "password": args.password},
                                        headers={"X-CSRFToken": token, "Referer": args.url + "/"})
        assert response.ok, response.text()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.clearBrowserCache")
    cdp.send("Network.emulateNetworkConditions", {
        "offline": False, "latency": args.latency_ms,
        "downloadThroughput": args.mbps * 1_000_000 / 8, "uploadThroughput": args.mbps * 1_000_000 / 8})
    if identity:
        cdp.send("Network.setExtraHTTPHeaders", {"headers": {"Accept-Encoding": "identity"}})
    wire = {"bytes": 0, "requests": 0}
    decoded = {"bytes": 0}
    cdp.on("Network.loadingFinished", lambda e: wire.update(bytes=wire["bytes"] + e["encodedDataLength"],
                                                            requests=wire["requests"] + 1))
    cdp.on("Network.dataReceived", lambda e: decoded.update(bytes=decoded["bytes"] + e["dataLength"]))
    target = "/" + (route or "").format(circuit=args.circuit, run=args.run)
    start = time.perf_counter()
    page.goto(target)
    page.get_by_test_id(ready).first.wait_for(state="visible", timeout=120_000)
    ready_s = time.perf_counter() - start
    page.wait_for_load_state("networkidle")
    context.close()
    return {"page": name, "encoding": "identity" if identity else "br", "ready_s": ready_s,
            "wire_kb": wire["bytes"] / 1024, "decoded_kb": decoded["bytes"] / 1024, "requests": wire["requests"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--user", default="demo")
    parser.add_argument("--password", default="demo")
    parser.add_argument("--circuit", type=int, default=1)
    parser.add_argument("--run", type=int, default=1)
    parser.add_argument("--mbps", type=float, default=10.0)
    parser.add_argument("--latency-ms", type=float, default=40.0)
    parser.add_argument("--repeat", type=int, default=3, help="loads per page and encoding (the median is printed)")
    args = parser.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        print(f"cold cache, {args.mbps:g} Mbit/s, {args.latency_ms:g} ms latency, median of {args.repeat}")
        print("| page | encoding | on the wire KiB | decoded KiB | requests | ready s |")
        print("|---|---|---|---|---|---|")
        for name, route, ready in PAGES:
            for identity in (False, True):
                runs = sorted((measure(browser, args, name, route, ready, identity) for _ in range(args.repeat)),
                              key=lambda r: r["ready_s"])
                r = runs[len(runs) // 2]
                print(f"| {r['page']} | {r['encoding']} | {r['wire_kb']:,.0f} | {r['decoded_kb']:,.0f} | {r['requests']} "
                      f"| {r['ready_s']:.2f} |", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
