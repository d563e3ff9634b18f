"""Every connector kind, by name (each declared next to its client: see kinds.py).
A new kind: its module's `KINDS`, added to `_SPECS` below."""
from __future__ import annotations

from dataclasses import replace

from dbsp.connector_specs import ON_ERROR, KindShape, declare_kinds

from . import delta, files, generator, kafka, mqtt, nats_jetstream, nexmark, postgres, redis_streams, webhook
from .errors import ConfigError
from .kinds import KindSpec

_SPECS = [*kafka.KINDS, *files.KINDS, *postgres.KINDS, *redis_streams.KINDS, *nats_jetstream.KINDS, *mqtt.KINDS,
          *generator.KINDS, *nexmark.KINDS, *delta.KINDS, *webhook.KINDS]
#: options every source takes, beside its kind's own: what a bad record does (docs/connectors.md, "Bad records")
SOURCE_OPTIONS = frozenset({"on_error"})
_KINDS: dict[str, KindSpec] = {spec.name: replace(spec, options=spec.options | SOURCE_OPTIONS) if spec.source else spec
                               for spec in _SPECS}


def kinds() -> dict[str, KindSpec]:
    return _KINDS


def spec(kind: str) -> KindSpec:
    try:
        return _KINDS[kind]
    except KeyError:
        raise ConfigError(f"unknown kind {kind!r} (kinds: {', '.join(sorted(_KINDS))})") from None


def on_error(config: dict) -> str:
    """A source's `on_error`: fail (the default) or dead_letter."""
    return (config or {}).get("on_error") or ON_ERROR[0]


def is_source(kind: str) -> bool:
    found = _KINDS.get(kind)
    return bool(found and found.source)


def hand_kinds_to_the_engine() -> None:
    """The engine checks documents' connectors against these kinds (at app start, and
    by the command line before it compiles a circuit that declares connectors)."""
    declare_kinds([KindShape(s.name, s.source, s.options, s.required, s.formats) for s in _KINDS.values()])
