"""Delta Lake through deltalake (delta-rs, no JVM): a source that reads a table by
version and a sink that appends each tick's delta as one Delta commit, once.

Source: the snapshot at its start version (the latest at declaration unless
`start_version` says, resolved when it opens and stored), then each later version's
changes: from the change data feed when the table has it on (`delta.enableChangeDataFeed`),
else from the commit's add and remove actions: the rows of the files it removed are
deletes, the rows of the files it added inserts. Without the feed, a commit that rewrites
files (OPTIMIZE, a DELETE or UPDATE that copies the untouched rows of a file) is read as
deletes and inserts of the same rows: they net to zero in the Z-set, so the view is
right, but they are pushed (and counted) as records.

Sink: each tick is one commit: `mode: changelog` appends the delta's rows with `tick`
and `weight` columns; `mode: table` keeps the view's contents by `key` (deltalake's
merge: a key the tick inserts is upserted, a key it only deletes is deleted). The commit
carries Delta's application transaction (`txn`: app id = the connector's ident, version
= the tick) and the tick in its commit metadata (`dbspweb.tick`). `committed_tick` reads
the transaction version from the table: a tick the table holds is never written again."""
from __future__ import annotations

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, SchemaMismatchError, TableNotFoundError

from . import arrow_rows
from .errors import ConfigError, RecordError, Transient
from .kinds import KindSpec

CDF = "delta.enableChangeDataFeed"
#: the change data feed's change types, as records
CHANGES = {"insert": "insert", "update_postimage": "insert", "delete": "delete", "update_preimage": "delete"}
CDF_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
SINK_MODES = ("changelog", "table")


def _path(config: dict) -> str:
    if not config.get("path"):
        raise ConfigError("path is required")
    return str(config["path"])


def _table(path: str, storage: dict, version: int | None = None) -> DeltaTable:
    try:
        return DeltaTable(path, version=version, storage_options=storage or None)
    except TableNotFoundError as e:
        raise Transient(f"no Delta table at {path} (yet): {e}") from None
    except (DeltaError, OSError) as e:
        raise Transient(f"Delta table {path}: {e}") from None


class DeltaSource:
    """Position: `{"version": n, "snapshot": true}` while the snapshot at n is being
    applied, `{"version": n}` once everything up to version n is; `"record": k` inside a
    unit (a snapshot or a version's changes) larger than one push: its first k records
    are applied."""

    def __init__(self, config: dict, secrets: dict, position: dict):
        self.path, self.storage = _path(config), dict(secrets or {})
        self.at = dict(position or {})
        self._cache: tuple[tuple, list] | None = None
        self._live: DeltaTable | None = None
        if "version" not in self.at:
            start = config.get("start_version")
            latest = self._latest()
            if start is None:
                start = latest
            if start > latest:
                raise ConfigError(f"start_version {start}: the table's latest version is {latest}")
            self.at = {"version": start, "snapshot": True}

    def _latest(self) -> int:
        if self._live is None:
            self._live = _table(self.path, self.storage)
        else:
            try:
                self._live.update_incremental()
            except (DeltaError, OSError) as e:
                raise Transient(f"Delta table {self.path}: {e}") from None
        return self._live.version()

    def position(self) -> dict:
        return dict(self.at)

    def check(self) -> None:
        self._latest()

    def _unit(self, schema) -> tuple[tuple, list]:
        """(key, items) of what comes next: the snapshot at the position's version, or
        the next version's changes (no items when there is none yet)."""
        version = self.at["version"]
        if self.at.get("snapshot"):
            key = ("snapshot", version)
        elif version < self._latest():
            key = ("changes", version + 1)
        else:
            return ("none", version), []
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._snapshot(version, schema) if key[0] == "snapshot" else self._changes(version + 1, schema))
        return self._cache

    def poll(self, limit: int, decode, schema):
        key, items = self._unit(schema)
        if key[0] == "none":
            return [], self.position()
        done = self.at.get("record", 0)
        taken, count = [], 0
        for position, records in items[done:]:
            if taken and count + len(records) > limit:
                break
            taken.append((position, records))
            count += len(records)
        end = done + len(taken)
        if end < len(items):
            return taken, {**{k: v for k, v in self.at.items() if k != "record"}, "record": end}
        return taken, {"version": key[1]}

    def _snapshot(self, version: int, schema) -> list:
        table = _table(self.path, self.storage, version)
        _refuse_deletion_vectors(table, version)
        data = _read(lambda: table.to_pyarrow_table(), f"version {version}")
        return arrow_rows.items(data, schema, f"version {version}")

    def _changes(self, version: int, schema) -> list:
        table = _table(self.path, self.storage, version)
        if table.metadata().configuration.get(CDF) == "true":
            return self._feed(table, version, schema)
        _refuse_deletion_vectors(table, version)
        before = _table(self.path, self.storage, version - 1).to_pyarrow_dataset()
        after = table.to_pyarrow_dataset()
        old = {f.path: f for f in before.get_fragments()}
        new = {f.path: f for f in after.get_fragments()}
        items = []
        for change, files, dataset in (("delete", sorted(set(old) - set(new)), before),
                                       ("insert", sorted(set(new) - set(old)), after)):
            for name in files:
                fragment = (old if change == "delete" else new)[name]
                where = f"version {version} {name}"
                data = _read(lambda: fragment.to_table(schema=dataset.schema), where)
                items += arrow_rows.items(data, schema, where, change)
        return items

    def _feed(self, table: DeltaTable, version: int, schema) -> list:
        where = f"version {version}"
        data = _read(lambda: pa.table(table.load_cdf(starting_version=version, ending_version=version).read_all()), where)
        kinds = data.column("_change_type").to_pylist()
        rows = arrow_rows.rows(data.drop_columns([c for c in CDF_COLUMNS if c in data.column_names]), schema, where)
        return [(f"{where} row {n}", [{CHANGES[kind]: row}]) for n, (kind, row) in enumerate(zip(kinds, rows), start=1)]

    def advanced(self, position: dict) -> None:
        self.at = dict(position)

    def close(self) -> None:
        self._live, self._cache = None, None


def _read(read, where: str) -> pa.Table:
    try:
        return read()
    except FileNotFoundError as e:
        raise ConfigError(f"{where}: a data file is gone (vacuumed?): {e}") from None
    except (DeltaError, OSError) as e:
        raise Transient(f"{where}: {e}") from None


def _refuse_deletion_vectors(table: DeltaTable, version: int) -> None:
    features = table.protocol().reader_features or []
    if "deletionVectors" in features:
        raise ConfigError(f"version {version}: the table uses deletion vectors, which this source reads only "
                          f"through the change data feed (set {CDF} = true)")


class DeltaSink:
    """Writes each tick's delta in one commit: appended (`changelog`: the view's columns,
    then `tick` and `weight`) or merged by key (`table`: the view's columns)."""

    def __init__(self, config: dict, secrets: dict, ident: str, schema):
        self.path, self.storage, self.ident, self.schema = _path(config), dict(secrets or {}), ident, schema
        self.mode = config.get("mode") or SINK_MODES[0]
        problem = _check_sink(config, None)
        if problem:
            raise ConfigError(problem)
        self.key = _keys(config)
        if self.mode == "table" and schema is not None:
            unknown = [k for k in self.key if schema.column(k) is None]
            if unknown:
                raise ConfigError(f"key: the view has no column {unknown[0]!r} (columns: {', '.join(schema.names)})")
        self.committed_tick = self._committed()

    def _committed(self) -> int:
        try:
            table = DeltaTable(self.path, storage_options=self.storage or None)
        except TableNotFoundError:
            return -1  # the first tick creates it
        except (DeltaError, OSError) as e:
            raise Transient(f"Delta table {self.path}: {e}") from None
        done = table.transaction_version(self.ident)
        return -1 if done is None else done

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        if tick <= self.committed_tick:
            return  # the table holds it
        commit = CommitProperties(custom_metadata={"dbspweb.tick": str(tick), "dbspweb.writer": self.ident},
                                  app_transactions=[Transaction(self.ident, tick)])
        try:
            if self.mode == "table":
                self._merge(tick, rows, commit)
            else:
                data = arrow_rows.delta_table(rows, self.schema, {
                    "tick": pa.array([tick] * len(rows), pa.int64()), "weight": pa.array([w for _, w in rows], pa.int64())})
                write_deltalake(self.path, data, mode="append", commit_properties=commit,
                                storage_options=self.storage or None)
        except SchemaMismatchError as e:
            raise ConfigError(f"Delta table {self.path}: the view's columns do not fit the table's: {e}") from None
        except (CommitFailedError, DeltaError, OSError) as e:
            raise Transient(f"Delta table {self.path}: {e}") from None
        self.committed_tick = tick

    def _merge(self, tick: int, rows: list[tuple[dict, int]], commit: CommitProperties) -> None:
        """One merge: per key, the row the tick inserts (an upsert) or, when it only deletes, a delete."""
        ops: dict[tuple, tuple[str, dict]] = {}
        for data, weight in rows:
            key = tuple(data.get(k) for k in self.key)
            if weight > 0:
                if weight > 1 or ops.get(key, ("",))[0] == "upsert":
                    raise ConfigError(f"tick {tick}: the key ({', '.join(self.key)}) = {list(key)} is held by more than "
                                      f"one row of the view: mode table needs a key unique in the view")
                ops[key] = ("upsert", data)
            else:
                ops.setdefault(key, ("delete", data))  # an upsert of the key replaces the deleted row anyway
        source = arrow_rows.delta_table([(data, 1) for _, data in ops.values()], self.schema,
                                        {"_dbspweb_op": pa.array([op for op, _ in ops.values()], pa.string())})
        columns = [c for c in source.column_names if c != "_dbspweb_op"]
        empty = source.drop_columns(["_dbspweb_op"]).slice(0, 0)
        write_deltalake(self.path, empty, mode="ignore", storage_options=self.storage or None)  # made when missing
        on = " AND ".join(f't.{_quoted(k)} IS NOT DISTINCT FROM s.{_quoted(k)}' for k in self.key)
        values = {_quoted(c): f"s.{_quoted(c)}" for c in columns}
        table = DeltaTable(self.path, storage_options=self.storage or None)
        (table.merge(source, predicate=on, source_alias="s", target_alias="t", commit_properties=commit)
         .when_matched_delete(predicate="s._dbspweb_op = 'delete'")
         .when_matched_update(updates=values, predicate="s._dbspweb_op = 'upsert'")
         .when_not_matched_insert(updates=values, predicate="s._dbspweb_op = 'upsert'")
         .execute())

    def close(self) -> None:
        pass


def _quoted(column: str) -> str:
    """A column name as a quoted SQL identifier for the merge's predicate (names come from
    the view's schema; a double quote is doubled, so a name cannot end the identifier)."""
    return '"' + column.replace('"', '""') + '"'


def _check_source(config: dict, schema) -> str | None:
    start = config.get("start_version")
    if start is not None and (isinstance(start, bool) or not isinstance(start, int) or start < 0):
        return "start_version: a table version (an integer, 0 or more)"
    return None


def _check_sink(config: dict, schema) -> str | None:
    mode = config.get("mode") or SINK_MODES[0]
    if mode not in SINK_MODES:
        return f"mode must be one of {', '.join(SINK_MODES)}"
    key = config.get("key")
    if key is not None and not (isinstance(key, str) or (isinstance(key, list) and all(isinstance(k, str) for k in key))):
        return "key: a column name, or a list of them"
    if mode == "table" and not _keys(config):
        return "key: mode table needs the view's key columns"
    if mode != "table" and key:
        return "key: only with mode table"
    return None


def _keys(config: dict) -> list[str]:
    """`key`: a list of column names, or one text of them separated by commas (as postgres_sink's)."""
    key = config.get("key") or []
    return [k.strip() for k in key.split(",") if k.strip()] if isinstance(key, str) else list(key)


KINDS = [
    KindSpec("delta_source", True, frozenset({"path", "start_version", "max_batch"}), ("path",),
             lambda o: DeltaSource(o.config, o.secrets, o.position),
             doc="a Delta table's snapshot at a version, then each later version's changes", check=_check_source),
    KindSpec("delta_sink", False, frozenset({"path", "mode", "key"}), ("path",),
             lambda o: DeltaSink(o.config, o.secrets, o.ident, arrow_rows.sink_schema(o)),
             doc="appends each tick's delta to a Delta table (or keeps the view by key) in one commit, once",
             check=_check_sink),
]
