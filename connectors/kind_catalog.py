"""The connector kinds as the editor's form needs them (GET /api/connector-kinds/), built
from the registry so a new kind appears without frontend changes, and a connection test
(POST /api/connector-kinds/<kind>/test/): the kind's client opened and closed once."""
from __future__ import annotations

import threading

from django.conf import settings

from .errors import ConfigError, RecordError, Transient
from .kinds import KindSpec, Opening, secrets_of
from .pump import open_kind
from dbsp.connector_specs import ON_ERROR

from .registry import kinds, spec

#: how the form edits an option, by its name (others: a line of text)
OPTION_TYPES = {"options": "object", "headers": "object", "columns": "list", "max_batch": "integer", "port": "integer",
                "roll_ticks": "integer", "seed": "integer", "events": "integer", "limit": "integer", "rate": "integer"}


#: an option that is one of a few values: its choices (first the default), by its name
CHOICES = {"format": lambda kind: list(kind.formats), "on_error": lambda kind: list(ON_ERROR)}


def option_type(name: str) -> str:
    if name in OPTION_TYPES:
        return OPTION_TYPES[name]
    return "integer" if name.startswith("max_") or name.endswith(("_ms", "_seconds")) else "string"


def describe(kind: KindSpec) -> dict:
    required = list(kind.required)
    rest = sorted(kind.options - set(required))
    return {
        "name": kind.name, "source": kind.source, "doc": kind.doc,
        "options": [{"name": name, "required": name in kind.required, "type": option_type(name),
                     "choices": CHOICES.get(name, lambda k: [])(kind)}
                    for name in [*required, *rest]],
    }


def catalog() -> list[dict]:
    return [describe(kind) for _, kind in sorted(kinds().items())]


def test_connection(kind_name: str, config: dict, secrets_env: dict, timeout: float | None = None) -> dict:
    """Open the kind's client with `config` (and the secrets named in `secrets_env`, read
    from this process's environment), check it can reach its target, close it.
    {"ok": True} or {"ok": False, "error": why}; bounded by DBSPWEB_CONNECTOR_TEST_SECONDS."""
    kind = spec(kind_name)  # ConfigError for an unknown kind (the view answers 404 first)
    timeout = settings.CONNECTOR_TEST_SECONDS if timeout is None else timeout
    outcome: dict = {}

    def attempt():
        try:
            unknown = sorted(set(config) - kind.options)
            if unknown:
                raise ConfigError(f"unknown option {unknown[0]!r} for {kind.name} (options: {', '.join(sorted(kind.options))})")
            missing = [k for k in kind.required if config.get(k) in (None, "")]
            if missing:
                raise ConfigError(f"{kind.name} needs the option {missing[0]!r}")
            client = open_kind(kind_name, Opening(0, "connection-test", "test", config,
                                                  secrets_of({}, secrets_env), {}, probe=True))
            try:
                check = getattr(client, "check", None)
                if check is not None:
                    check()
            finally:
                client.close()
            outcome["result"] = {"ok": True, "error": ""}
        except (ConfigError, Transient, RecordError) as e:
            outcome["result"] = {"ok": False, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - a client library's own error is the answer
            outcome["result"] = {"ok": False, "error": f"{type(e).__name__}: {e}"}

    worker = threading.Thread(target=attempt, name=f"connector-test-{kind_name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return {"ok": False, "error": f"no answer within {timeout:g} s (DBSPWEB_CONNECTOR_TEST_SECONDS)"}
    return outcome["result"]
