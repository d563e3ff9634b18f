"""Files: a source that applies the files of a folder (or one file) once each, in name
order (CSV, JSON Lines or Parquet), and a sink that writes each tick's delta as one JSON
Lines or Parquet file named by the tick, atomically (a temporary file renamed into place:
a crash never leaves half a file, and writing a tick again replaces its file with the
same content)."""
from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dbsp.csv_records import CSVInvalid, records_from_csv

from . import arrow_rows, formats
from .errors import ConfigError, RecordError, Rejected, Transient, bare
from .kinds import KindSpec

FILE_FORMATS = ("csv", "insert_delete", "debezium", "json", "parquet")
SINK_FORMATS = ("jsonl", "parquet")


class FileSource:
    """Position: `{"after": name}` (every file up to that name is applied) and, while a
    file larger than one push is in progress, `{"file": name, "record": n}` (its first n
    records are applied). Files whose names sort before `after` are never read again:
    drop new files in with names that sort later (a timestamp first)."""

    def __init__(self, config: dict, position: dict):
        if not config.get("path"):
            raise ConfigError("path is required")
        self.path = Path(config["path"])
        self.format = config.get("format", "csv")
        if self.format not in FILE_FORMATS:
            raise ConfigError(f"format must be one of {', '.join(FILE_FORMATS)}; got {self.format!r}")
        self.pattern = config.get("pattern", "*")
        self.dead_letters = config.get("on_error") == "dead_letter"
        self.at = dict(position or {})
        self._cache: tuple[str, list] | None = None

    def position(self) -> dict:
        return dict(self.at)

    def pending(self) -> list[Path]:
        after = self.at.get("after")
        return [p for p in self._files() if after is None or p.name > after]

    def _files(self) -> list[Path]:
        if self.path.is_file():
            files = [self.path]
        elif self.path.is_dir():
            files = sorted(p for p in self.path.iterdir() if p.is_file() and not p.name.startswith(".")
                           and not p.name.endswith(".tmp") and fnmatch.fnmatch(p.name, self.pattern))
        else:
            raise Transient(f"{self.path} is not there (yet)")
        return files

    def lag(self, position: dict) -> tuple[int, str]:
        """The files not applied yet at `position` (the one it is inside counted)."""
        after = position.get("after")
        inside = position.get("file")
        return sum(1 for p in self._files() if (after is None or p.name > after) or p.name == inside), "files"

    def check(self) -> None:
        """A connection test: the folder or file is there (Transient when not)."""
        self.pending()

    def poll(self, max_records: int, decode, schema):
        """([(position, records)], the position after them): up to max_records records
        of the first file not yet applied. `decode(position, payload)` reads one line of
        a JSON format; a CSV file is read with its header (dbsp/csv_records.py)."""
        files = self.pending()
        if not files:
            return [], self.position()
        path = files[0]
        done = self.at.get("record", 0) if self.at.get("file") == path.name else 0
        if self._cache is None or self._cache[0] != (path.name, path.stat().st_mtime_ns):
            self._cache = ((path.name, path.stat().st_mtime_ns), self._read(path, decode, schema))
        items = self._cache[1]
        taken, count = [], 0
        for position, records in items[done:]:
            if taken and count + len(records) > max_records:
                break
            taken.append((position, records))
            count += len(records)
        end = done + len(taken)
        after = {"after": path.name} if end >= len(items) else {**{k: v for k, v in self.at.items() if k == "after"},
                                                                 "file": path.name, "record": end}
        return taken, after

    def _read(self, path: Path, decode, schema) -> list:
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise Transient(f"cannot read {path}: {e}") from None
        if self.format == "csv":
            return csv_items(path.name, raw, schema, keep_going=self.dead_letters)
        if self.format == "parquet":
            return parquet_items(path.name, raw, schema)
        items = []
        for number, line in enumerate(raw.splitlines(), start=1):
            if line.strip():
                position = f"{path.name}:{number}"
                items.append((position, decode(position, line)))
        return items

    def advanced(self, position: dict) -> None:
        self.at = dict(position)

    def close(self) -> None:
        pass


def csv_items(name: str, raw: bytes, schema, keep_going: bool = False) -> list:
    """A CSV file's records, one item per data line (its header names the columns, as an
    upload's does); its first problem is a RecordError naming the file and the line (with
    `keep_going`, each bad line is a Rejected: a dead letter)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordError("", f"{name}", f"not UTF-8 text: byte {e.start}") from None
    try:
        parsed = records_from_csv(text, schema)
    except CSVInvalid as e:
        first = e.problems[0] if e.problems else {}
        raise RecordError("", f"{name}:{first.get('line', 1)}", bare(first["message"]) if first else e.detail,
                          first.get("field")) from None
    if parsed.problems and not keep_going:
        first = parsed.problems[0]
        raise RecordError("", f"{name}:{first.get('line')}", bare(first["message"]), first.get("field"))
    # with dead letters (keep_going): a bad line is a Rejected in its place, its line's text the payload
    bad: dict[int, dict] = {}
    for problem in parsed.problems:
        bad.setdefault(problem.get("row"), problem)
    lines = text.splitlines()
    return [(f"{name}:{row + 2}", [record] if row not in bad else Rejected(
                RecordError("", f"{name}:{row + 2}", bare(bad[row]["message"]), bad[row].get("field")),
                lines[row + 1] if row + 1 < len(lines) else ""))
            for row, record in enumerate(parsed.records)]


def parquet_items(name: str, raw: bytes, schema) -> list:
    """A Parquet file's rows as inserts, one item per row (`<file> row <n>`), its columns
    matched by name to the input's and their types checked (connectors/arrow_rows.py)."""
    try:
        table = pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowInvalid, OSError) as e:
        raise RecordError("", name, f"not a Parquet file: {e}") from None
    return arrow_rows.items(table, schema, name)


class FileSink:
    """Writes `<path>/<view>-<tick, 12 digits>.jsonl`, one insert/delete record a line, or
    with `format: parquet` `<view>-<tick>.parquet`: the view's columns and `weight`.

    Rolling (`roll_ticks: N` above 1): the ticks kN .. kN+N-1 go to one file named by kN,
    each record carrying its `tick` (a JSON field; a Parquet column). A tick is added by
    writing the whole file again (temp, fsync, rename) with the records of the earlier
    ticks and this one's, so writing a tick again replaces it: no duplicate, no gap."""

    def __init__(self, config: dict, view: str, schema=None):
        if not config.get("path"):
            raise ConfigError("path is required")
        self.schema = schema  # the view's (for Parquet's column types)
        self.format = config.get("format") or SINK_FORMATS[0]
        if self.format not in SINK_FORMATS:
            raise ConfigError(f"format must be one of {', '.join(SINK_FORMATS)}; got {self.format!r}")
        self.path, self.view = Path(config["path"]), view
        self.roll = config.get("roll_ticks", 1)
        if isinstance(self.roll, bool) or not isinstance(self.roll, int) or self.roll < 1:
            raise ConfigError(f"roll_ticks: the ticks a file holds, a whole number (1: a file per tick); got {self.roll!r}")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise Transient(f"cannot make {self.path}: {e}") from None
        self.committed_tick = -1

    def file_of(self, tick: int) -> Path:
        return self.path / f"{self.view}-{tick - tick % self.roll:012d}.{self.format}"

    def _content(self, tick: int, rows: list[tuple[dict, int]]) -> bytes:
        if self.roll == 1:
            if self.format == "parquet":
                return parquet_bytes(rows, self.schema)
            return b"".join(v + b"\n" for data, weight in rows for v in formats.encode(data, weight))
        earlier = self.file_of(tick)  # the rolling file: its ticks before this one, then this one's
        if self.format == "parquet":
            table = parquet_table(rows, self.schema, tick)
            if earlier.exists():
                held = pq.read_table(earlier)
                held = held.filter(pc.less(held.column("tick"), tick))
                table = pa.concat_tables([held, table.cast(held.schema)])
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink)
            return sink.getvalue().to_pybytes()
        kept = [line for line in earlier.read_bytes().splitlines() if json.loads(line)["tick"] < tick] if earlier.exists() else []
        new = [json.dumps({**json.loads(v), "tick": tick}, separators=(",", ":"), sort_keys=True).encode()
               for data, weight in rows for v in formats.encode(data, weight)]
        return b"".join(line + b"\n" for line in kept + new)

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        try:
            content = self._content(tick, rows)
        except (OSError, ValueError, pa.ArrowException) as e:
            raise Transient(f"cannot read {self.file_of(tick)}: {e}") from None
        final = self.file_of(tick)
        temp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        try:
            with open(temp, "wb") as out:
                out.write(content)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, final)
        except OSError as e:
            temp.unlink(missing_ok=True)
            raise Transient(f"cannot write {final}: {e}") from None

    def close(self) -> None:
        pass


def parquet_table(rows: list[tuple[dict, int]], schema, tick: int | None = None) -> pa.Table:
    """One tick's delta: the view's columns, typed by its schema, `weight` (and `tick`, rolling)."""
    extra = {"weight": pa.array([weight for _, weight in rows], pa.int64())}
    if tick is not None:
        extra["tick"] = pa.array([tick] * len(rows), pa.int64())
    return arrow_rows.delta_table(rows, schema, extra)


def parquet_bytes(rows: list[tuple[dict, int]], schema) -> bytes:
    """One tick's delta as a Parquet file: the view's columns, typed by its schema, and `weight`."""
    table = parquet_table(rows, schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def _open_sink(o):
    wants_schema = (o.config.get("format") or SINK_FORMATS[0]) == "parquet"
    return FileSink(o.config, o.node, arrow_rows.sink_schema(o) if wants_schema else None)


KINDS = [
    KindSpec("file_source", True, frozenset({"path", "format", "pattern", "columns", "max_batch"}), ("path",),
             lambda o: FileSource(o.config, o.position), formats=FILE_FORMATS,
             doc="applies the files of a folder once each, in name order, or one file once"),
    KindSpec("file_sink", False, frozenset({"path", "format", "roll_ticks"}), ("path",), _open_sink,
             formats=SINK_FORMATS, doc="writes each tick's delta as one JSON Lines or Parquet file named by the tick, "
                                       "or rolling: `roll_ticks` ticks a file, named by its first"),
]
