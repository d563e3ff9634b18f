"""The live protocol's schema (runs/live_protocol.schema.json): the one source of truth for
the websocket messages of docs/live-protocol.md, both ways. The server's messages are
checked against it in the tests (tests/live_protocol.py); the browser's TypeScript types
(frontend/src/api/live.d.ts) are generated from it by ./scripts/api-types, through
`as_openapi` (openapi-typescript reads OpenAPI components, so the schema's `$defs` are
handed to it as such). Standard library only: no Django, no validator at run time."""
from __future__ import annotations

import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("live_protocol.schema.json")


def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _components_refs(value):
    if isinstance(value, dict):
        return {k: (v.replace("#/$defs/", "#/components/schemas/", 1) if k == "$ref" and isinstance(v, str)
                    else _components_refs(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_components_refs(v) for v in value]
    return value


def as_openapi(source: dict | None = None) -> dict:
    """The schema's definitions as an OpenAPI 3.1 document's components (no paths)."""
    source = schema() if source is None else source
    return {
        "openapi": "3.1.0",
        "info": {"title": source["title"], "version": "1", "description": source["description"]},
        "paths": {},
        "components": {"schemas": _components_refs(source["$defs"])},
    }


def serialise(document: dict) -> str:
    """Sorted keys, 2 spaces, one final newline (as scripts/api-types writes JSON)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # scripts/api-types: python -m runs.live_protocol > live-openapi.json
    import sys

    sys.stdout.write(serialise(as_openapi()))
