"""Where a run's inspections live on disk: one directory per (run, circuit version,
tick) under settings.INSPECT_DIR, holding one Arrow IPC file per node and kind (its
delta, its contents) and a manifest (manifest.json) naming them with their sizes.

Files are uncompressed Arrow so that the web process memory-maps them and pages
(runs/node_pages.py) without reading a 10^6-row state into Python objects. A table
holds the node's columns, typed as its schema says (lists as their canonical JSON
text, dbsp.types.encode_list), and the weight in WEIGHT, sorted by the columns so that
the default order is stable. The worker writes a directory whole under a temporary name
and renames it into place: a reader sees all of it or nothing.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
from django.conf import settings

from dbsp.types import Schema, element_type, encode_list
from dbsp.zset import ZSet

WEIGHT = "__w"  # the engine reserves names starting with "__" (dbsp.frames.WEIGHT)
MANIFEST = "manifest.json"
KINDS = ("delta", "integral")
_ARROW_TYPES = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_(),
                "date": pa.date32(), "timestamp": pa.timestamp("us")}


def run_directory(run_id: int) -> Path:
    return Path(settings.INSPECT_DIR) / f"run-{run_id}"


def directory(run_id: int, version_id: int, tick: int) -> Path:
    return run_directory(run_id) / f"v{version_id}-tick-{tick}"


def arrow_type(column_type: str) -> pa.DataType:
    return pa.string() if element_type(column_type) else _ARROW_TYPES[column_type]


def node_table(z: ZSet, schema: Schema) -> pa.Table:
    """A Z-set as an Arrow table: the schema's columns and the weight, sorted by the columns."""
    items = list(z)
    columns = list(zip(*(row for row, _ in items))) if items else [() for _ in schema.columns]
    arrays = []
    for column, values in zip(schema.columns, columns):
        if element_type(column.type):
            values = [encode_list(v) for v in values]
        arrays.append(pa.array(values, arrow_type(column.type)))
    arrays.append(pa.array([w for _, w in items], pa.int64()))
    table = pa.Table.from_arrays(arrays, names=[*schema.names, WEIGHT])
    if table.num_rows > 1:
        table = table.sort_by([(name, "ascending") for name in schema.names] + [(WEIGHT, "ascending")])
    return table


def _write_table(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=256 * 1024)


def write(target: Path, nodes: dict[str, dict], tables) -> int:
    """Write an inspection: `nodes` is the manifest's node entries (node id -> facts
    about it) and `tables(node_id, kind)` gives each node's tables; returns the bytes
    written. An existing directory (another worker got there first) is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.{uuid.uuid4().hex}"
    staging.mkdir()
    try:
        entries = {}
        for index, (node_id, facts) in enumerate(nodes.items()):
            entry = dict(facts)
            if "alias_of" not in facts:
                for kind in KINDS:
                    table = tables(node_id, kind)
                    name = f"n{index}.{kind}.arrow"
                    _write_table(staging / name, table)
                    entry[kind] = {"file": name, "rows": table.num_rows}
            entries[node_id] = entry
        (staging / MANIFEST).write_text(json.dumps({"nodes": entries}))
        size = sum(p.stat().st_size for p in staging.iterdir())
        try:
            os.rename(staging, target)
        except OSError:  # already there (the same inspection computed twice): keep the first
            shutil.rmtree(staging, ignore_errors=True)
            size = directory_bytes(target)
        return size
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def directory_bytes(target: Path) -> int:
    return sum(p.stat().st_size for p in target.iterdir()) if target.is_dir() else 0


def manifest(target: Path) -> dict | None:
    try:
        return json.loads((target / MANIFEST).read_text())
    except FileNotFoundError:
        return None


def open_table(target: Path, file_name: str) -> pa.Table:
    """A stored table, memory-mapped (nothing is read until a page needs it)."""
    return pa.ipc.open_file(pa.memory_map(str(target / file_name))).read_all()  # the buffers keep the map open


def remove(target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)


def discard_runs(run_ids) -> None:
    """Deleted runs: their inspections' files go too."""
    for run_id in run_ids:
        shutil.rmtree(run_directory(run_id), ignore_errors=True)
