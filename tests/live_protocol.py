"""Messages checked against the live protocol's schema (runs/live_protocol.schema.json,
the one source of truth of docs/live-protocol.md), by jsonschema: the fixture
`live_messages_follow_their_schema` (tests/conftest.py) checks every message the server
sends in the tests, the live watchers (tests/live/stack.py) every message they receive."""
from __future__ import annotations

from jsonschema import Draft202012Validator

from runs.live_protocol import schema

SCHEMA = schema()
Draft202012Validator.check_schema(SCHEMA)


def _names(union: str) -> dict[str, str]:
    """The messages of a union ($defs ServerMessage or ClientMessage), by their `type`."""
    names = [ref["$ref"].rsplit("/", 1)[-1] for ref in SCHEMA["$defs"][union]["oneOf"]]
    return {SCHEMA["$defs"][n]["properties"]["type"]["const"]: n for n in names}


SERVER_MESSAGES = _names("ServerMessage")
CLIENT_MESSAGES = _names("ClientMessage")
_validators = {name: Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"})
               for name in {**SERVER_MESSAGES, **CLIENT_MESSAGES}.values()}


def problems(message, sender: str = "server") -> list[str]:
    """What is wrong with a message against the schema (empty: nothing), each naming the
    message kind and the place in it, e.g. `DeltaMessage at views.v[0].weight: ...`."""
    kinds = SERVER_MESSAGES if sender == "server" else CLIENT_MESSAGES
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in kinds:
        return [f"a {sender} message of type {kind!r}: the schema knows {sorted(kinds)}"]
    name = kinds[kind]
    found = []
    for error in sorted(_validators[name].iter_errors(message), key=lambda e: list(e.absolute_path)):
        where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in error.absolute_path).replace(".[", "[")
        found.append(f"{name} at {where or '(the message)'}: {error.message}")
    return found
