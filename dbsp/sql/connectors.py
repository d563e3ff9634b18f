"""`WITH ('connectors' = '[...]')` on CREATE TABLE and CREATE VIEW, in Feldera's
spelling, read into the document's connectors (an input's or output's
`params.connectors`, see dbsp/connector_specs.py).

Each element is `{"name"?, "transport": {"name", "config"}, "format"?: {"name", "config"}}`:

| transport | our kind | config |
|---|---|---|
| `kafka_input` | `kafka_source` | `bootstrap.servers`, `topic` (or `topics`: one), `group.id`, `start_from` (`earliest`, `latest`); other keys: librdkafka settings |
| `kafka_output` | `kafka_sink` | `bootstrap.servers`, `topic`; other keys: librdkafka settings |
| `file_input` | `file_source` | `path` (a file or a folder), `follow` (ignored: a folder is always watched) |
| `file_output` | `file_sink` | `path` (a folder: one file per tick) |
| `datagen` | `generator_source` | `plan` (Feldera's datagen plan: connectors/datagen.py), `seed`; `workers` dropped |
| `<x>_input` / `<x>_output` | `<x>_source` / `<x>_sink` | as the kind's options (other kinds) |

Formats: `json` with `update_format` `insert_delete` (the default), `debezium` or `raw`
(rows: inserts), `csv`, and `parquet` (files). A sink writes `json` `insert_delete`, or
`parquet` (`file_output`). Our extension:
`"secrets_env": {"option": "ENV_VAR"}` (secrets are never written in SQL).
Every problem names its line:column.
"""
from __future__ import annotations

import json
import re

from .. import connector_specs
from .errors import Span, SqlError, SqlProblem

KAFKA_RENAMES = {"bootstrap.servers": "bootstrap_servers", "topic": "topic", "group.id": "group_id"}
FORMATS = {("json", "insert_delete"): "insert_delete", ("json", "debezium"): "debezium", ("json", "raw"): "json",
           ("csv", None): "csv", ("csv", "insert_delete"): "csv", ("parquet", None): "parquet"}
#: our kinds' own option names, also taken in a transport's config (export_sql writes them)
OWN_KAFKA_OPTIONS = {"kafka_source": {"bootstrap_servers", "topic", "group_id", "start", "columns", "max_batch",
                                                     "on_error"},
                     "kafka_sink": {"bootstrap_servers", "topic"}}
#: a source's `format` -> Feldera's format object
FELDERA_FORMATS = {"insert_delete": {"name": "json", "config": {"update_format": "insert_delete"}},
                   "debezium": {"name": "json", "config": {"update_format": "debezium"}},
                   "json": {"name": "json", "config": {"update_format": "raw"}},
                   "csv": {"name": "csv"}, "parquet": {"name": "parquet"}}
ENTRY_FIELDS = {"name", "transport", "format", "secrets_env", "max_queued_records", "paused", "labels", "start_after",
                "max_batch_size", "index"}


class _Text:
    """Positions in a string literal's JSON text -> line:column in the script."""

    def __init__(self, script, literal):
        self.script, self.meta = script, literal.meta if hasattr(literal, "meta") else {}
        raw = script.text[self.meta["start"] + 1:self.meta["end"]] if "start" in self.meta else ""
        self.offsets, i = [], 0  # JSON index -> script offset ('' in SQL is one ')
        while i < len(raw):
            self.offsets.append(self.meta["start"] + 1 + i)
            i += 2 if raw[i:i + 2] == "''" else 1
        self.whole = script.span(literal)

    def at(self, index: int) -> Span | None:
        if not self.offsets:
            return self.whole
        offset = self.offsets[min(max(index, 0), len(self.offsets) - 1)]
        return self.script.offsets(offset, offset)

    def of(self, text: str, needle: str) -> Span | None:
        found = text.find(needle)
        return self.at(found) if found >= 0 else self.whole


def read(script, prop, relation: str, table: bool) -> list[dict]:
    """The connectors a `'connectors' = '...'` property declares, as document entries."""
    literal = prop.args.get("value")
    where = _Text(script, literal)
    if literal is None or not literal.is_string:
        raise SqlError([SqlProblem("'connectors' must be a string holding a JSON list", script.span(prop))])
    text = literal.this
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise SqlError([SqlProblem(f"'connectors' of {relation}: not valid JSON: {e.msg}", where.at(e.pos))]) from None
    if not isinstance(value, list):
        raise SqlError([SqlProblem(f"'connectors' of {relation}: a JSON list of connectors", where.whole)])
    entries, names = [], set()
    for i, item in enumerate(value):
        entry = _entry(item, i, relation, table, text, where)
        if entry["name"] in names:
            raise SqlError([SqlProblem(f"connector {entry['name']!r} of {relation}: the name is used twice",
                                       where.of(text, json.dumps(entry["name"])))])
        names.add(entry["name"])
        entries.append(entry)
    return entries


def _entry(item, i: int, relation: str, table: bool, text: str, where: _Text) -> dict:
    def fail(message: str, needle: str | None = None):
        raise SqlError([SqlProblem(f"connector {i + 1} of {relation}: {message}",
                                   where.of(text, needle) if needle else where.whole)])

    if not isinstance(item, dict):
        fail("an object with a transport")
    unknown = sorted(set(item) - ENTRY_FIELDS)
    if unknown:
        fail(f"unknown field {unknown[0]!r}", f'"{unknown[0]}"')
    transport = item.get("transport")
    if not isinstance(transport, dict) or not isinstance(transport.get("name"), str):
        fail('a "transport": {"name": ..., "config": {...}}', '"transport"')
    tname = transport["name"]
    config = transport.get("config") or {}
    if not isinstance(config, dict):
        fail(f"the config of transport {tname!r} must be an object", f'"{tname}"')
    wanted, other = ("_input", "_output") if table else ("_output", "_input")
    known = connector_specs.known_kinds()
    if tname.endswith(other):
        fail(f"transport {tname!r} is {'an output' if table else 'an input'}; a {'table' if table else 'view'} "
             f"takes *{wanted} transports", f'"{tname}"')
    kind = tname[:-len(wanted)] + ("_source" if table else "_sink") if tname.endswith(wanted) else None
    if tname == "datagen":  # Feldera's generator of a plan's rows: our generator_source with the plan
        if not table:
            fail("transport 'datagen' is an input; a view takes *_output transports", '"datagen"')
        kind = "generator_source"
    if kind is None or (known and kind not in known):
        choices = sorted(k[:-len("_source" if table else "_sink")] + wanted for k, s in known.items() if s.source == table)
        fail(f"unknown transport {tname!r}" + (f" (transports: {', '.join(choices)})" if choices else ""), f'"{tname}"')
    name = item.get("name", f"{relation}-{'in' if table else 'out'}{'' if i == 0 else i + 1}")
    if not isinstance(name, str) or not connector_specs.NAME.match(name):
        fail(f"name {name!r}: a letter, then letters, digits, _ or - (at most 64)", '"name"')
    options = _config(kind, config, fail)
    fmt = item.get("format")
    if fmt is not None:
        if not isinstance(fmt, dict) or not isinstance(fmt.get("name"), str):
            fail('"format" must be {"name": ..., "config": {...}}', '"format"')
        update = (fmt.get("config") or {}).get("update_format")
        ours = FORMATS.get((fmt["name"], update if update is not None else ("insert_delete" if fmt["name"] == "json" else None)))
        if ours is None:
            fail(f"format {fmt['name']!r}" + (f" with update_format {update!r}" if update else "")
                 + " is not supported (json with insert_delete, debezium or raw; csv)", f'"{fmt["name"]}"')
        if table or ours == "parquet":
            options["format"] = ours  # a sink other than file_output refuses a format option (the engine's check)
        elif ours != "insert_delete":
            fail("a sink writes json with update_format insert_delete, or parquet (file_output)", f'"{fmt["name"]}"')
    entry = {"name": name, "kind": kind, "config": options}
    secrets_env = item.get("secrets_env")
    if secrets_env is not None:
        entry["secrets_env"] = secrets_env
    return entry


def _config(kind: str, config: dict, fail) -> dict:
    if kind in ("kafka_source", "kafka_sink"):
        out, librdkafka = {}, {}
        for key, value in config.items():
            if key in KAFKA_RENAMES:
                out[KAFKA_RENAMES[key]] = value
            elif key == "topics" and kind == "kafka_source":
                if not isinstance(value, list) or len(value) != 1:
                    fail("topics: one topic (a connector reads one topic)", '"topics"')
                out["topic"] = value[0]
            elif key == "start_from" and kind == "kafka_source":
                if value not in ("earliest", "latest"):
                    fail("start_from: earliest or latest", '"start_from"')
                out["start"] = value
            elif key == "options" and isinstance(value, dict):
                librdkafka.update(value)
            elif key in OWN_KAFKA_OPTIONS[kind]:
                out[key] = value  # our own spelling (what export_sql writes)
            elif re.match(r"^[a-z]+(\.[a-z]+)+$", key):
                librdkafka[key] = value
            else:
                fail(f"unknown {kind.replace('_source', '_input').replace('_sink', '_output')} option {key!r}", f'"{key}"')
        if librdkafka:
            out["options"] = librdkafka
        return out
    if kind == "file_source":
        return {k: v for k, v in config.items() if k != "follow"}
    if kind == "generator_source" and "plan" in config:  # (Feldera's `workers` only splits the work)
        return {k: v for k, v in config.items() if k != "workers"}
    return dict(config)


def write(entries: list[dict]) -> str:
    """A node's connectors as `'connectors' = '...'` (the inverse of `read`: our option
    names inside Feldera's transport and format objects; read back, the same entries)."""
    out = []
    for entry in entries:
        kind, config = entry["kind"], dict(entry.get("config") or {})
        transport = kind[:-len("_source")] + "_input" if kind.endswith("_source") else kind[:-len("_sink")] + "_output"
        # a format Feldera has no spelling for (a file sink's jsonl) stays in the transport's config
        spelled = config.get("format") in FELDERA_FORMATS
        item = {"name": entry["name"], "transport": {"name": transport,
                                                     "config": {k: v for k, v in config.items() if k != "format" or not spelled}}}
        if spelled:
            item["format"] = FELDERA_FORMATS.get(config["format"], {"name": config["format"]})
        if entry.get("secrets_env"):
            item["secrets_env"] = entry["secrets_env"]
        out.append(item)
    text = json.dumps(out, indent=2)
    return "'connectors' = '" + text.replace("'", "''") + "'"
