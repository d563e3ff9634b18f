"""Connectors declared in a circuit document: an input's or an output's
`params.connectors`, a list of `{"name", "kind", "config", "secrets_env"}` (see
docs/connectors.md, "Declaring them in the editor"). A run of the version gets one
connector per entry when it starts.

The engine checks their shape and, against the kinds it was told of, the kind (a source
on an input, a sink on an output), unknown options and missing required ones, each
problem naming the node. The kinds belong to the web app (connectors/registry.py), which
hands them over when it starts (`declare_kinds`); the engine alone (python -m dbsp) knows
none and checks the shape only.

Secrets are never in a document: `secrets_env` names, per secret option, the environment
variable the worker reads it from when the connector's client opens.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import Problem

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
FIELDS = ("name", "kind", "config", "secrets_env")
SECRET_WORDS = ("password", "secret", "token", "key")


#: a source's `on_error` option (every source kind takes it): fail on a bad record (the
#: default), or send it to the connector's dead letters and go on (docs/connectors.md)
ON_ERROR = ("fail", "dead_letter")


@dataclass(frozen=True)
class KindShape:
    name: str
    source: bool
    options: frozenset[str]
    required: tuple[str, ...]
    formats: tuple[str, ...] = ()  # the choices of its `format` option (none: not checked)


_KINDS: dict[str, KindShape] = {}


def declare_kinds(kinds: list[KindShape]) -> None:
    """The connector kinds documents may use (the web app's registry, at start)."""
    _KINDS.clear()
    _KINDS.update({k.name: k for k in kinds})


def known_kinds() -> dict[str, KindShape]:
    return dict(_KINDS)


def check(node_id: str, value, source: bool) -> list[Problem]:
    """The problems of one node's `connectors` parameter (none when absent)."""
    if value is None:
        return []
    where = "an input" if source else "an output"

    def problem(message: str) -> Problem:
        return Problem(f"node {node_id!r}: connectors{message}", node=node_id, param="connectors")

    if not isinstance(value, list):
        return [problem(": must be a list of {name, kind, config, secrets_env}")]
    problems: list[Problem] = []
    names: set[str] = set()
    for i, entry in enumerate(value):
        at = f"[{i}]"
        if not isinstance(entry, dict):
            problems.append(problem(f"{at}: must be an object with name, kind and config"))
            continue
        unknown = sorted(set(entry) - set(FIELDS))
        if unknown:
            problems.append(problem(f"{at}: unknown field {unknown[0]!r} (fields: {', '.join(FIELDS)}); "
                                    "secrets are named in secrets_env, never written in the document"))
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            problems.append(problem(f"{at}: name must be a letter, then letters, digits, _ or - (at most 64); got {name!r}"))
            continue
        at = f"[{i}] {name!r}"
        if name in names:
            problems.append(problem(f"{at}: the name is used twice"))
            continue
        names.add(name)
        kind, config, secrets_env = entry.get("kind"), entry.get("config", {}), entry.get("secrets_env", {})
        if not isinstance(kind, str) or not kind:
            problems.append(problem(f"{at}: kind must be a connector kind"))
            continue
        if not isinstance(config, dict):
            problems.append(problem(f"{at}: config must be an object of options"))
            continue
        if not isinstance(secrets_env, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and ENV_NAME.match(v) for k, v in secrets_env.items()):
            problems.append(problem(f"{at}: secrets_env must map each secret option to an environment variable name "
                                    "(letters, digits, _)"))
            continue
        secretish = [k for k in (config.get("options") or {}) if isinstance(config.get("options"), dict)
                     and any(w in k.lower() for w in SECRET_WORDS)]
        if secretish:
            problems.append(problem(f"{at}: option {secretish[0]!r} is a secret: name its environment variable in "
                                    "secrets_env instead"))
            continue
        if not _KINDS:
            continue  # the engine alone: the kinds are the web app's
        shape = _KINDS.get(kind)
        if shape is None:
            problems.append(problem(f"{at}: unknown kind {kind!r} (kinds: {', '.join(sorted(_KINDS))})"))
            continue
        if shape.source != source:
            fitting = sorted(k.name for k in _KINDS.values() if k.source == source)
            problems.append(problem(f"{at}: {kind} is a {'source' if shape.source else 'sink'}; {where} takes "
                                    f"{', '.join(fitting)}"))
            continue
        unknown = sorted(set(config) - shape.options)
        if unknown:
            problems.append(problem(f"{at}: unknown option {unknown[0]!r} for {kind} "
                                    f"(options: {', '.join(sorted(shape.options))})"))
            continue
        missing = [k for k in shape.required if config.get(k) in (None, "")]
        if missing:
            problems.append(problem(f"{at}: {kind} needs the option {missing[0]!r}"))
            continue
        fmt = config.get("format")
        if fmt is not None and shape.formats and fmt not in shape.formats:
            problems.append(problem(f"{at}: format must be one of {', '.join(shape.formats)}; got {fmt!r}"))
        on_error = config.get("on_error")
        if on_error is not None and on_error not in ON_ERROR:
            problems.append(problem(f"{at}: on_error must be one of {', '.join(ON_ERROR)}; got {on_error!r}"))
    return problems


def declared_in(document: dict) -> list[tuple[str, dict]]:
    """(node, entry) for each connector the document declares, in node order."""
    found = []
    for node in (document or {}).get("nodes") or []:
        if node.get("kind") in ("input", "output"):
            for entry in (node.get("params") or {}).get("connectors") or []:
                found.append((node["id"], entry))
    return found
