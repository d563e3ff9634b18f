"""Webhook sink through httpx: an HTTP POST of each tick's delta to a URL, with an
`Idempotency-Key` header the receiver dedupes by. At least once: the sink cannot read
back what the receiver holds (`committed_tick` is -1), so a tick the database did not
record as written (a crash between the answer and the commit) is posted again, with the
same key and the same body."""
from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from .errors import ConfigError, Transient
from .kinds import NAME_WORDS, KindSpec

TIMEOUT = 10.0
#: answers tried again (with the pump's backoff): the receiver is busy or away for a while
RETRIED = {408, 429}


def _check(config: dict, schema=None) -> str | None:
    url = config.get("url")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        return "url: an http:// or https:// URL"
    headers = config.get("headers")
    if headers is not None:
        if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
            return "headers: an object of header names to text values"
        for name in headers:
            if name.lower() == "authorization" or any(word in name.lower() for word in NAME_WORDS):
                return f"headers: {name!r} looks like a secret: put it in secrets"
    timeout = config.get("timeout_seconds")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        return "timeout_seconds: a number of seconds above 0"
    return None


class WebhookSink:
    """POSTs `{"run", "view", "tick", "records": [{"insert": row} | {"delete": row}, ...]}`
    (a record per unit of weight) with `Idempotency-Key: run-<id>-<name>-tick-<n>`.
    2xx: written. A connection error, a timeout, 408, 429 or 5xx: Transient (posted again
    after the pump's backoff). Any other answer fails the connector, naming the status and
    the start of the body."""

    def __init__(self, config: dict, secrets: dict, run_id: int, name: str, view: str):
        problem = _check(config)
        if problem:
            raise ConfigError(problem)
        self.url, self.run_id, self.name, self.view = config["url"], run_id, name, view
        headers = {**(config.get("headers") or {}), **{k: str(v) for k, v in (secrets or {}).items()}}
        self.http = httpx.Client(headers=headers, timeout=config.get("timeout_seconds") or TIMEOUT)
        self.committed_tick = -1

    def key(self, tick: int) -> str:
        return f"run-{self.run_id}-{self.name}-tick-{tick}"

    def body(self, tick: int, rows: list[tuple[dict, int]]) -> dict:
        records = [{("insert" if weight > 0 else "delete"): data} for data, weight in rows for _ in range(abs(weight))]
        return {"run": self.run_id, "view": self.view, "tick": tick, "records": records}

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        try:
            answer = self.http.post(self.url, json=self.body(tick, rows), headers={"Idempotency-Key": self.key(tick)})
        except httpx.TransportError as e:  # refused, reset, timed out, DNS
            raise Transient(f"POST {self.url}: {type(e).__name__}: {e}") from None
        if answer.is_success:
            return
        status = f"POST {self.url}: HTTP {answer.status_code} {answer.reason_phrase}: {answer.text[:200]}"
        if answer.status_code in RETRIED or answer.status_code >= 500:
            raise Transient(status)
        raise ConfigError(status)

    def check(self) -> None:
        """A connection test: the server answers (any status; nothing is posted)."""
        try:
            self.http.head(self.url)
        except httpx.TransportError as e:
            raise Transient(f"{self.url}: {type(e).__name__}: {e}") from None

    def close(self) -> None:
        self.http.close()


KINDS = [
    KindSpec("webhook_sink", False, frozenset({"url", "headers", "timeout_seconds"}), ("url",),
             lambda o: WebhookSink(o.config, o.secrets, o.run_id, o.name, o.node),
             doc="POSTs each tick's delta to a URL with an Idempotency-Key (at least once)", check=_check),
]
