"""PostgreSQL: a change-data-capture source of one table (an initial snapshot, then its
changes through logical replication with the `pgoutput` plugin) and a sink that keeps a
view's contents in a table, or appends its changes to one, a tick per transaction.

Source, exactly once:
- a new connector creates its replication slot over the replication protocol with an
  exported snapshot, and reads the table in that snapshot: a change is in the snapshot
  exactly when its commit is at or before the slot's consistent point, so the changes the
  slot then hands out (commits after that point) are neither lost nor doubled;
- changes are read with `pg_logical_slot_peek_binary_changes` (psycopg 3 speaks the
  replication protocol's commands, not its stream): peeking consumes nothing, so what a
  push that did not commit had read is read again;
- its position is `{"lsn": <end LSN of the last transaction applied>}` (plus
  `"txn"`/`"done"` inside a transaction larger than one push, and `"snapshot": <rows>`
  while snapshotting), stored with the push in one database transaction (pump.py);
  transactions ending at or before it are skipped, and the slot is advanced to it only
  after that commit (`advanced`).
An update is a delete of the old row and an insert of the new: the table needs
`REPLICA IDENTITY FULL` (checked at open; the error says the statement).

Sink, exactly once: each tick is applied in ONE transaction of the target database
together with the tick number in `dbspweb_sink_progress(sink, tick)`, under a lock of the
sink's progress row; a tick at or below the recorded one is not applied again.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Sequence
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from . import formats, pgoutput
from .errors import ConfigError, RecordError, Transient
from .kinds import KindSpec, Opening

#: the session settings every connection uses: values' text forms are the ISO ones
SESSION = "-c DateStyle=ISO,YMD -c TimeZone=UTC -c extra_float_digits=3 -c IntervalStyle=iso_8601"
TIMEOUT = 10
#: WAL bytes past the stored position after which an idle source marks its place: while
#: its table is quiet, the slot would otherwise hold the server's WAL back (and each peek
#: decode more of it) however busy the rest of the server is
IDLE_ADVANCE = 16 << 20
#: what a refused connection says (libpq's connection errors carry no SQLSTATE): the
#: connector's setting, not a server away
REFUSALS = ("authentication failed", "no password supplied", "must be superuser or replication role",
            "permission denied", "does not exist")


def _installation_key() -> str:
    """This installation's secret key (the server's settings, set up before any connector
    opens), or "" on the command line, which sets up no Django (its connectors' idents
    carry a hash of their state folder)."""
    from django.conf import settings  # lazy: importing it reads nothing

    return settings.SECRET_KEY if settings.configured else ""


def slot_name(ident: str) -> str:
    """A replication slot's and publication's name for a connector: lower case letters,
    digits and _ (what PostgreSQL allows), then a hash of the ident and of this
    installation's secret key (slot names are the server's, not a database's: two
    installations' run 1 must not share one). Stored in the position, which is what a
    connector opens again and what its deletion drops."""
    digest = hashlib.sha1(f"{_installation_key()}\0{ident}".encode()).hexdigest()[:8]
    return (re.sub(r"[^a-z0-9_]", "_", ident.lower())[:50] + "_" + digest)


def _password(config: dict, secrets: dict) -> str | None:
    if secrets.get("password"):
        return secrets["password"]
    if config.get("password_env"):
        value = os.environ.get(config["password_env"])
        if value is None:
            raise ConfigError(f"password_env: the environment variable {config['password_env']!r} is not set")
        return value
    return None


def check_dsn(dsn) -> str | None:
    if not isinstance(dsn, str) or not dsn:
        return "dsn is required (a libpq connection string or postgresql:// URL)"
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        return f"dsn: not a libpq connection string: {e}"
    if parts.get("password"):
        return "dsn: no password in it; put it in secrets {\"password\": ...} or name an environment variable in password_env"
    return None


def connect(config: dict, secrets: dict, **extra) -> psycopg.Connection:
    problem = check_dsn(config.get("dsn"))
    if problem:
        raise ConfigError(problem)
    try:
        return psycopg.connect(config["dsn"], password=_password(config, secrets), connect_timeout=TIMEOUT,
                               options=SESSION, **extra)
    except psycopg.OperationalError as e:
        text = str(e)
        if (e.sqlstate or "").startswith("28") or any(w in text for w in REFUSALS):
            raise ConfigError(f"PostgreSQL refused the sign-in: {_first_line(e)}") from None  # not tried again
        raise Transient(f"PostgreSQL: {_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def translated(e: psycopg.Error) -> Exception:
    """A server or network trouble is transient; anything else (a missing table, a
    permission) is the connector's setting."""
    if isinstance(e, (psycopg.OperationalError, psycopg.InterfaceError)):
        return Transient(f"PostgreSQL: {_first_line(e)}")
    return ConfigError(f"PostgreSQL: {_first_line(e)}")


# --- values -----------------------------------------------------------------------

def from_text(text, column_type: str):
    """A PostgreSQL value's text form (its type's output, or `::text`) as the JSON value
    a push carries for the input's column type; ValueError saying why it does not fit."""
    if text is None:
        return None
    t = column_type
    if t == "bigint":
        try:
            number = Decimal(text)
        except InvalidOperation:
            raise ValueError(f"expected an integer (bigint), got {text!r}") from None
        if not number.is_finite() or number != number.to_integral_value():
            raise ValueError(f"expected an integer (bigint), got {text!r}")
        return int(number)
    if t == "double":
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"expected a number (double), got {text!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"{text} is not a finite number")
        return value
    if t == "string":
        return text
    if t == "boolean":
        if text in ("t", "true"):
            return True
        if text in ("f", "false"):
            return False
        raise ValueError(f"expected true or false, got {text!r}")
    if t == "date":
        try:
            return dt.date.fromisoformat(text).isoformat()
        except ValueError:
            raise ValueError(f"expected a date 'YYYY-MM-DD', got {text!r}") from None
    if t == "timestamp":
        try:
            ts = dt.datetime.fromisoformat(text.replace(" ", "T", 1))
        except ValueError:
            raise ValueError(f"expected a timestamp, got {text!r}") from None
        if ts.tzinfo is not None:
            ts = ts.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return ts.isoformat()
    raise ValueError(f"the column type {t} cannot be read from PostgreSQL (bigint, double, string, boolean, date, timestamp)")


SOURCE_TYPES = ("bigint", "double", "string", "boolean", "date", "timestamp")


def _bigint(text):
    # PostgreSQL's integer output (digits, a leading '-') is int() at once; anything else
    # (numeric's '12.000', a text column's words) goes through from_text, which decides
    if text is not None and text.isascii() and (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
        return int(text)
    return from_text(text, "bigint")


def _string(text):
    return text


def converter(column_type: str):
    """from_text for one column type, as a function of the text alone (a snapshot or a
    stream converts millions of values: the common forms are taken without its chain of
    tests; every other text goes through it, so the values and refusals are its own)."""
    if column_type == "bigint":
        return _bigint
    if column_type == "string":
        return _string
    return lambda text: from_text(text, column_type)


# --- the source -------------------------------------------------------------------

class SnapshotPositions(Sequence):
    """The positions of a snapshot poll's rows, `<table> snapshot row <n>`, written out
    only when one is asked for (an error naming its row)."""

    def __init__(self, table: str, done: int, count: int):
        self.table, self.done, self.count = table, done, count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> str:
        if not 0 <= i < self.count:
            raise IndexError(i)
        return f"{self.table} snapshot row {self.done + i + 1}"


class PostgresSource:
    def __init__(self, opening: Opening, schema):
        self.config, self.schema = opening.config, schema
        self.label_table = opening.config.get("table")
        if not self.label_table:
            raise ConfigError("table is required")
        self.slot = (opening.position or {}).get("slot") or slot_name(opening.ident)
        self.publication = opening.config.get("publication") or self.slot
        self.at = dict(opening.position or {})
        self.conn = self.snap = None
        self._lag: tuple[float, str, int] | None = None  # (read at, for the LSN, bytes): `lag`
        self.advanced_to = None
        self.layouts = {}  # relid -> (its last relation message, its column positions, the source columns it lacks)
        with closed_on_failure(self):
            self.conn = connect(self.config, opening.secrets, autocommit=True)
            self._describe()
            self._ensure_publication()
            self._ensure_slot(opening)

    def _describe(self) -> None:
        self.oid, self.namespace, self.name = _source_table(self.conn, self.label_table)
        self.table = sql.Identifier(self.namespace, self.name)
        have = dict(self.conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s AND attnum > 0"
            " AND NOT attisdropped", (self.oid,)).fetchall())
        mapping = self.config.get("columns") or {}
        self.columns = []  # (input column, table column, type)
        for column in self.schema.columns:
            if column.type not in SOURCE_TYPES:
                raise ConfigError(f"column {column.name!r}: type {column.type} cannot be read from PostgreSQL "
                                  f"({', '.join(SOURCE_TYPES)})")
            source = mapping.get(column.name, column.name)
            if source not in have:
                raise ConfigError(f"column {column.name!r}: table {self.namespace}.{self.name} has no column {source!r} "
                                  f"(its columns: {', '.join(sorted(have))}; map names with the columns option)")
            self.columns.append((column.name, source, column.type))
        self.converters = [(name, converter(type_)) for name, _, type_ in self.columns]
        # the primary key orders the snapshot, so that one interrupted by a restart resumes after its last row
        self.key = self.conn.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typcategory = 'N', t.typcollation <> 0"
            " FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
            " JOIN pg_type t ON t.oid = a.atttypid WHERE i.indrelid = %s AND i.indisprimary"
            " ORDER BY array_position(i.indkey::int2[], a.attnum)", (self.oid,)).fetchall()

    def _ensure_publication(self) -> None:
        row = self.conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (self.publication,)).fetchone()
        if row is None:
            if self.config.get("publication"):
                raise ConfigError(f"publication {self.publication!r} is not there")
            self.conn.execute(sql.SQL("CREATE PUBLICATION {} FOR TABLE {}").format(sql.Identifier(self.publication), self.table))

    def _slot_exists(self) -> bool:
        return self.conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s",
                                 (self.slot,)).fetchone() is not None

    def _ensure_slot(self, opening: Opening) -> None:
        snapshot = self.at.get("snapshot")
        if self.at.get("lsn") and (snapshot is None or snapshot > 0):
            if not self._slot_exists():
                raise ConfigError(f"the replication slot {self.slot!r} is gone: the changes after LSN {self.at['lsn']} "
                                  f"cannot be read; declare the connector again")
            if snapshot:
                self._resume_snapshot(opening)
            return
        # new (or a snapshot that pushed nothing yet): a fresh slot and its snapshot
        if self._slot_exists():
            self.conn.execute("SELECT pg_drop_replication_slot(%s)", (self.slot,))
        consistent = self._start_snapshot(opening, self.slot, "")
        self.at = {"lsn": consistent, "snapshot": 0, "segments": [[None, consistent]], "slot": self.slot}

    def _resume_snapshot(self, opening: Opening) -> None:
        """A snapshot interrupted by a restart: its exported snapshot is gone with the
        connection that held it. The rest of the table (keys after the last row pushed)
        is read in a new snapshot, consistent with the LSN of a temporary slot; the slot's
        changes then apply to a row by the snapshot its key was read in (`segments`: a
        change of a key up to `upper` applies when its commit is at or after `lsn`)."""
        if not self.key or "after" not in self.at:
            raise ConfigError(
                f"the initial snapshot of {self.namespace}.{self.name} was interrupted after {self.at['snapshot']} rows "
                f"and the table has no primary key to resume it by: declare the connector again on a new run")
        consistent = self._start_snapshot(opening, f"{self.slot}_r", "TEMPORARY", self.at["after"])
        segments = [list(s) for s in self.at["segments"]]
        segments[-1][0] = self.at["after"]
        self.at = {**self.at, "segments": [*segments, [None, consistent]]}

    def _start_snapshot(self, opening: Opening, slot: str, temporary: str, after: list | None = None) -> str:
        """Creates `slot` with an exported snapshot, and opens a cursor over the table's
        rows (those after the key `after`) in that snapshot, in key order: the slot's
        consistent point (changes committed from it on are not in the snapshot)."""
        replication = connect(self.config, opening.secrets, autocommit=True, replication="database")
        try:
            cursor = psycopg.ClientCursor(replication)
            cursor.execute(sql.SQL("CREATE_REPLICATION_SLOT {} {} LOGICAL pgoutput (SNAPSHOT 'export')").format(
                sql.Identifier(slot), sql.SQL(temporary)))
            _, consistent, snapshot, _ = cursor.fetchone()
            self.snap = connect(self.config, opening.secrets)
            self.snap.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self.snap.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot)))
        finally:
            replication.close()  # the snapshot is imported: it lives on in self.snap's transaction (a temporary slot goes)
        # src."id", not "id": ORDER BY would take the output column "id" (its text) before the table's
        order = [sql.SQL("{} COLLATE \"C\"" if collatable else "{}").format(sql.Identifier("src", name))
                 for name, _, _, collatable in self.key]
        query = sql.SQL("SELECT {} FROM {} AS src").format(
            sql.SQL(", ").join([sql.SQL("{}::text").format(sql.Identifier(source)) for _, source, _ in self.columns]
                               + [sql.SQL("{}::text").format(sql.Identifier(name)) for name, *_ in self.key]),
            self.table)
        if after is not None:
            query += sql.SQL(" WHERE ({}) > ({})").format(sql.SQL(", ").join(order), sql.SQL(", ").join(
                sql.SQL("%s::{}" + (" COLLATE \"C\"" if collatable else "")).format(sql.SQL(type_))
                for _, type_, _, collatable in self.key))
        if self.key:
            query += sql.SQL(" ORDER BY {}").format(sql.SQL(", ").join(order))
        self.cursor = self.snap.cursor(name=f"{self.slot}_snapshot")
        self.cursor.execute(query, after)
        return consistent

    def _key_of(self, texts) -> tuple:
        """A primary key's text values as Python compares them in the snapshot's order
        (numbers as numbers; text in the C collation's, code point, order)."""
        return tuple(Decimal(t) if numeric else t for t, (_, _, numeric, _) in zip(texts, self.key))

    def _applies(self, key_texts, commit_lsn: int) -> bool:
        """Whether a change of the row with this key is not in the snapshot its key was read in."""
        key = self._key_of(key_texts)
        for upper, consistent in self.at.get("segments") or ():
            if upper is None or key <= self._key_of(upper):
                return commit_lsn >= pgoutput.lsn_int(consistent)
        return True

    def position(self) -> dict:
        return dict(self.at)

    def lag(self, position: dict) -> tuple[int, str] | None:
        """Bytes of WAL (of every table: PostgreSQL does not count a table's records)
        between `position` and the server's current WAL position (one query for a new
        position, else at most once a second); None while the snapshot is read."""
        lsn = position.get("lsn")
        if "snapshot" in position or not lsn or self.conn is None:
            return None
        now = time.monotonic()
        if self._lag is None or self._lag[1] != lsn or now - self._lag[0] >= 1.0:
            behind = self.conn.execute("SELECT pg_current_wal_lsn() - %s::pg_lsn", (lsn,)).fetchone()[0]
            self._lag = (now, lsn, max(0, int(behind)))
        return self._lag[2], "bytes"

    def poll(self, limit: int, decode, schema):
        try:
            items, after = self._poll_snapshot(limit) if "snapshot" in self.at else self._poll_changes(limit)
        except psycopg.Error as e:
            raise translated(e) from None
        return items, {**after, "slot": self.slot}

    def _row(self, values, position: str) -> dict:
        try:
            return {name: convert(text) for (name, convert), text in zip(self.converters, values)}
        except ValueError:
            pass  # named below, column by column
        row = {}
        for (name, _, type_), text in zip(self.columns, values):
            try:
                row[name] = from_text(text, type_)
            except ValueError as e:
                raise RecordError("", position, str(e), name) from None
        return row

    #: a snapshot's rows go to the pump as Arrow columns when every column's text converts
    #: (formats.Columns; `_columns`); False: a dict a row, as before (bench/pg_pump.py compares)
    columns_at_once = True

    def _poll_snapshot(self, limit: int):
        done, width = self.at["snapshot"], len(self.columns)
        rows = self.cursor.fetchmany(limit)

        def records():
            items = []
            for i, values in enumerate(rows, start=done + 1):
                position = f"{self.namespace}.{self.name} snapshot row {i}"
                items.append((position, [{"insert": self._row(values[:width], position)}]))
            return items

        arrays = self._columns(rows, width) if self.columns_at_once and rows else None
        items = formats.Columns(arrays, SnapshotPositions(f"{self.namespace}.{self.name}", done, len(rows)),
                                records) if arrays is not None else records()
        if len(rows) < limit:
            self.snap.rollback()  # the snapshot's transaction is over
            self.snap.close()
            self.snap = None
            return items, self._past({"lsn": self.at["lsn"], "segments": self.at["segments"]}, self.at["lsn"])
        after = {**self.at, "snapshot": done + len(rows)}
        if self.key and rows:
            after["after"] = list(rows[-1][width:])
        return items, after

    def _columns(self, rows: list[tuple], width: int) -> dict | None:
        """The rows' text values as Arrow arrays by input column, converted as `from_text`
        converts them (bigint, double, string, boolean; None for any other type or any
        value Arrow does not take as `from_text` would: the rows then go one by one, which
        names a bad value). No dict a row: a 10^6-row snapshot spent most of the pump's
        time building and reading them."""
        arrays = {}
        for (name, _, type_), texts in zip(self.columns, list(zip(*rows))[:width]):
            text = pa.array(texts, pa.string())
            try:
                if type_ == "string":
                    arrays[name] = text
                elif type_ == "bigint":
                    # PostgreSQL's integer output: digits after an optional '-' (numeric's '12.000' goes one by one)
                    if not pc.all(pc.match_substring_regex(text, r"^-?[0-9]+$")).as_py() in (True, None):
                        return None
                    arrays[name] = pc.cast(text, pa.int64())
                elif type_ == "double":
                    if not pc.all(pc.match_substring_regex(text, r"^-?[0-9.]+(e[-+]?[0-9]+)?$")).as_py() in (True, None):
                        return None  # NaN, Infinity: refused one by one
                    arrays[name] = pc.cast(text, pa.float64())
                elif type_ == "boolean":
                    if not pc.all(pc.match_substring_regex(text, r"^(t|f|true|false)$")).as_py() in (True, None):
                        return None
                    arrays[name] = pc.or_(pc.equal(text, "t"), pc.equal(text, "true"))  # NULL stays NULL
                else:
                    return None
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        return arrays

    @staticmethod
    def _past(position: dict, lsn: str) -> dict:
        """The position at `lsn`, its segments dropped once every later commit is past all of them."""
        segments = position.get("segments")
        if not segments or max(pgoutput.lsn_int(cp) for _, cp in segments) <= pgoutput.lsn_int(lsn) or len(segments) == 1:
            return {k: v for k, v in position.items() if k != "segments"}
        return position

    def _peek(self, count: int) -> list[tuple]:
        return self.conn.execute(
            "SELECT lsn, data FROM pg_logical_slot_peek_binary_changes(%s, NULL, %s, 'proto_version', '1',"
            " 'publication_names', %s, 'messages', 'true')", (self.slot, count, self.publication)).fetchall()

    def _mark_if_idle(self, applied: int) -> None:
        """Nothing of the table's past the position, and much WAL of others': write a
        transactional logical message. The next peek reads it as a transaction without
        changes, whose end becomes the position, and the slot is advanced past the rest."""
        lag = self.conn.execute("SELECT pg_current_wal_lsn() - %s::pg_lsn", (pgoutput.lsn_text(applied),)).fetchone()[0]
        if lag > IDLE_ADVANCE:
            self.conn.execute("SELECT pg_logical_emit_message(true, 'dbspweb', %s)", (self.slot,))

    def _transactions(self, messages):
        """[(end LSN, commit LSN, [(position, records)])], whole transactions in commit order."""
        relations, out, current, begin = {}, [], None, None
        for lsn, data in messages:
            try:
                message = pgoutput.decode(data)
            except pgoutput.DecodeError as e:
                raise RecordError("", f"LSN {lsn}", f"not a pgoutput message: {e}") from None
            if isinstance(message, pgoutput.Relation):
                relations[message.relid] = message
            elif isinstance(message, pgoutput.Begin):
                current, begin = [], message
            elif isinstance(message, pgoutput.Commit):
                out.append((message.end_lsn, message.commit_lsn, current or []))
                current = None
            elif isinstance(message, pgoutput.Truncate) and self.oid in message.relids:
                raise RecordError("", f"LSN {pgoutput.lsn_text(begin.final_lsn) if begin else lsn}",
                                  f"TRUNCATE of {self.namespace}.{self.name} cannot be followed (delete the rows instead)")
            elif isinstance(message, pgoutput.Change) and current is not None and message.relid == self.oid:
                # (a publication of the user's may hold other tables too)
                current.append((message, relations.get(message.relid), begin.final_lsn))
        return [(end, commit, changes) for end, commit, changes in out]

    def _layout(self, relation) -> tuple[dict, list]:
        """A relation's column positions by name, and the source columns it lacks (once a
        relation message, not once a change)."""
        cached = self.layouts.get(relation.relid)
        if cached is None or cached[0] is not relation:  # each peek decodes its own relation messages
            if cached is None or cached[0].columns != relation.columns:
                index = {name: i for i, (name, _) in enumerate(relation.columns)}
                cached = (relation, index, [s for _, s, _ in self.columns if s not in index])
            cached = self.layouts[relation.relid] = (relation, cached[1], cached[2])
        return cached[1], cached[2]

    def _records(self, commit_lsn: int, changes, start: int, budget: int) -> tuple[list[tuple[str, list[dict]]], bool]:
        """The records of a transaction's changes from `start` on, at most `budget` of
        them (but at least one change's), and whether that was all of them: only what a
        push takes is converted (a transaction larger than a push is read in parts)."""
        items, count = [], 0
        for number, (change, relation, _) in enumerate(changes[start:], start=start + 1):
            position = f"LSN {pgoutput.lsn_text(commit_lsn)} change {number}"
            if relation is None:
                raise RecordError("", position, "a change of a relation the stream did not describe")
            if change.old_is_key:
                raise RecordError("", position, f"the old row carries only its key: set REPLICA IDENTITY FULL on "
                                                f"{self.namespace}.{self.name}")
            index, missing = self._layout(relation)
            if missing:
                raise RecordError("", position, f"table {relation.namespace}.{relation.name} has no column {missing[0]!r} "
                                                f"any more", missing[0])

            def pick(values, fallback=None):
                picked = []
                for _, source, _ in self.columns:
                    value = values[index[source]]
                    if value is pgoutput.UNCHANGED:
                        value = fallback[index[source]] if fallback is not None else None
                    picked.append(value)
                return picked

            def applies(values) -> bool:
                if not self.at.get("segments"):
                    return True
                return self._applies([values[index[name]] for name, *_ in self.key], commit_lsn)

            records = []
            if change.op in ("U", "D"):
                if change.old is None:
                    raise RecordError("", position, f"an update without its old row: set REPLICA IDENTITY FULL on "
                                                    f"{self.namespace}.{self.name}")
                if applies(change.old):
                    records.append({"delete": self._row(pick(change.old), position)})
            if change.op in ("I", "U"):
                new = [old if v is pgoutput.UNCHANGED else v for v, old in zip(change.new, change.old or change.new)]
                if applies(new):
                    records.append({"insert": self._row(pick(change.new, change.old), position)})
            if items and count + len(records) > budget:
                return items, False
            items.append((position, records))
            count += len(records)
        return items, True

    def _poll_changes(self, limit: int):
        applied = pgoutput.lsn_int(self.at["lsn"])
        partial_end, partial_done = self.at.get("txn"), self.at.get("done", 0)
        taken, count, after, fresh = [], 0, dict(self.at), False
        for end, commit, changes in self._transactions(self._peek(limit + 1000)):
            if end <= applied:
                continue  # applied before (the slot was not advanced yet)
            fresh = True
            skip = partial_done if partial_end is not None and pgoutput.lsn_int(partial_end) == end else 0
            items, whole = self._records(commit, changes, skip, limit - count)
            if whole and (not taken or count + sum(len(r) for _, r in items) <= limit):
                taken += items
                count += sum(len(r) for _, r in items)
                after = self._past({**self.at, "lsn": pgoutput.lsn_text(end)}, pgoutput.lsn_text(end))
                after.pop("txn", None), after.pop("done", None)
                continue
            if not taken:  # one transaction larger than a push: its first part now
                taken = items
                after = {**self.at, "txn": pgoutput.lsn_text(end), "done": skip + len(items)}
            break
        if not fresh:
            self._mark_if_idle(applied)
        return taken, after

    def advanced(self, position: dict) -> None:
        """The push holding the changes up to `position` committed: the slot may let go of them."""
        self.at = dict(position)
        if "snapshot" in position or position.get("lsn") == self.advanced_to:
            return
        try:
            self.conn.execute("SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (self.slot, position["lsn"]))
            self.advanced_to = position["lsn"]
        except psycopg.Error:
            pass  # tried again after the next push; a restart skips what the stored position covers

    def close(self) -> None:
        for conn in (self.snap, self.conn):
            if conn is not None:
                try:
                    conn.close()
                except psycopg.Error:
                    pass
        self.snap = self.conn = None


def drop_source(opening: Opening) -> None:
    """The connector is deleted: its replication slot (which holds WAL back) and the
    publication it created go. Best effort: a server away leaves them (docs say how)."""
    slot = (opening.position or {}).get("slot") or slot_name(opening.ident)
    try:
        with connect(opening.config, opening.secrets, autocommit=True) as conn:
            for _ in range(50):  # a pump may be peeking at it this moment (milliseconds): try again a little
                try:
                    conn.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                                 " WHERE slot_name = %s", (slot,))
                    break
                except psycopg.errors.ObjectInUse:
                    time.sleep(0.1)
            if not opening.config.get("publication"):
                conn.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(slot)))
    except (psycopg.Error, Transient, ConfigError):
        pass


# --- the sink ---------------------------------------------------------------------

PG_TYPES = {"bigint": "bigint", "double": "double precision", "string": "text", "boolean": "boolean",
            "date": "date", "timestamp": "timestamp without time zone",
            "array<bigint>": "bigint[]", "array<double>": "double precision[]", "array<string>": "text[]",
            "array<boolean>": "boolean[]"}
#: target column types a view's column may be written to
FITS = {"bigint": {"bigint", "numeric"}, "double": {"double precision", "numeric"},
        "string": {"text", "character varying"}, "boolean": {"boolean"}, "date": {"date"},
        "timestamp": {"timestamp without time zone", "timestamp with time zone"},
        "array<bigint>": {"bigint[]", "numeric[]"}, "array<double>": {"double precision[]", "numeric[]"},
        "array<string>": {"text[]", "character varying[]"}, "array<boolean>": {"boolean[]"}}
COUNT, TICK, WEIGHT = "dbspweb_count", "tick", "weight"
MODES = ("table", "changelog")


def _keys(config: dict) -> list[str]:
    key = config.get("key") or []
    return [k.strip() for k in key.split(",") if k.strip()] if isinstance(key, str) else list(key)


def check_sink(config: dict, _schema) -> str | None:
    if config.get("mode", "table") not in MODES:
        return f"mode must be one of {', '.join(MODES)}; got {config.get('mode')!r}"
    key = config.get("key")
    if key is not None and not (isinstance(key, str) or (isinstance(key, list) and all(isinstance(k, str) for k in key))):
        return "key: a column name, or a list of them"
    if key and config.get("mode") == "changelog":
        return "key: only for mode table"
    return check_dsn(config.get("dsn"))


class PostgresSink:
    """mode `table`: the table holds the view's current contents (by `key`: a delete then
    an insert of the key's row; without one: one row per distinct row with its
    multiplicity in `dbspweb_count`). mode `changelog`: every change appended with its
    `tick` and `weight`."""

    def __init__(self, opening: Opening, schema):
        # the sink's row in the target's progress table: its run and name, and this installation's
        # (two installations' run 1 may write to one database)
        installation = hashlib.sha1(f"{_installation_key()}\0sink".encode()).hexdigest()[:8]
        self.config, self.schema, self.sink = opening.config, schema, f"{opening.ident}-{installation}"
        self.mode = self.config.get("mode", "table")
        self.keys = _keys(self.config)
        unknown = [k for k in self.keys if k not in schema.names]
        if unknown:
            raise ConfigError(f"key: {unknown[0]!r} is not a column of the view ({', '.join(schema.names)})")
        extra = [COUNT] if self.mode == "table" and not self.keys else [TICK, WEIGHT] if self.mode == "changelog" else []
        clash = [c for c in extra if c in schema.names]
        if clash:
            raise ConfigError(f"the view has a column {clash[0]!r}, which mode {self.mode} adds itself")
        if not self.config.get("table"):
            raise ConfigError("table is required")
        self.conn = connect(self.config, opening.secrets, autocommit=True)  # transactions are explicit
        with closed_on_failure(self):
            self._prepare(extra)

    def _prepare(self, extra: list[str]) -> None:
        with self.conn.transaction():
            # one sink's setup at a time in a database: two CREATE TABLE IF NOT EXISTS at once
            # collide in the catalog ("duplicate key ... pg_type_typname_nsp_index")
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext('dbspweb sink setup'))")
            self.conn.execute("CREATE TABLE IF NOT EXISTS dbspweb_sink_progress (sink text PRIMARY KEY, tick bigint NOT NULL)")
            self.conn.execute("INSERT INTO dbspweb_sink_progress VALUES (%s, -1) ON CONFLICT (sink) DO NOTHING", (self.sink,))
            name = self.config["table"]
            found = self.conn.execute("SELECT to_regclass(%s)::oid", (name,)).fetchone()[0]
            parts = [p.strip('"') for p in name.split(".")] if found is None else None
            if found is None:
                if len(parts) > 2:
                    raise ConfigError(f"table: {name!r} is not a table name (schema.table)")
                self.table = sql.Identifier(*parts)
                columns = [sql.SQL("{} {}").format(sql.Identifier(c.name), sql.SQL(PG_TYPES[c.type])) for c in self.schema.columns]
                columns += [sql.SQL("{} bigint NOT NULL").format(sql.Identifier(c)) for c in extra]
                if self.keys:
                    columns.append(sql.SQL("PRIMARY KEY ({})").format(sql.SQL(", ").join(map(sql.Identifier, self.keys))))
                self.conn.execute(sql.SQL("CREATE TABLE {} ({})").format(self.table, sql.SQL(", ").join(columns)))
            else:
                namespace, relname = self.conn.execute(
                    "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = %s",
                    (found,)).fetchone()
                self.table = sql.Identifier(namespace, relname)
                have = dict(self.conn.execute(
                    "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s AND attnum > 0"
                    " AND NOT attisdropped", (found,)).fetchall())
                wanted = [(c.name, FITS[c.type], PG_TYPES[c.type]) for c in self.schema.columns]
                wanted += [(c, {"bigint", "integer", "numeric"}, "bigint") for c in extra]
                for column, fits, pg_type in wanted:
                    if column not in have:
                        raise ConfigError(f"table {namespace}.{relname} has no column {column!r} ({pg_type})")
                    if re.sub(r"\(.*\)", "", have[column]) not in fits:
                        raise ConfigError(f"table {namespace}.{relname}: column {column!r} is {have[column]}; "
                                          f"the view's {column!r} needs {' or '.join(sorted(fits))}")
            self.committed_tick = self.conn.execute("SELECT tick FROM dbspweb_sink_progress WHERE sink = %s",
                                                    (self.sink,)).fetchone()[0]

    def _value(self, column) -> sql.Composable:
        return sql.SQL("%s::{}").format(sql.SQL(PG_TYPES[column.type]))

    def _where(self, columns) -> sql.Composable:
        return sql.SQL(" AND ").join(sql.SQL("{} IS NOT DISTINCT FROM {}").format(sql.Identifier(c.name), self._value(c))
                                     for c in columns)

    def _insert(self, columns, extra=()) -> sql.Composable:
        names = [sql.Identifier(c.name) for c in columns] + [sql.Identifier(e) for e in extra]
        values = [self._value(c) for c in columns] + [sql.SQL("%s")] * len(extra)
        return sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(self.table, sql.SQL(", ").join(names), sql.SQL(", ").join(values))

    def write(self, tick: int, rows: list[tuple[dict, int]]) -> None:
        columns = self.schema.columns
        try:
            with self.conn.transaction():
                recorded = self.conn.execute("SELECT tick FROM dbspweb_sink_progress WHERE sink = %s FOR UPDATE",
                                             (self.sink,)).fetchone()[0]
                if recorded < tick:
                    self._apply(tick, rows, columns)
                    self.conn.execute("UPDATE dbspweb_sink_progress SET tick = %s WHERE sink = %s", (tick, self.sink))
            self.committed_tick = max(self.committed_tick, tick)
        except psycopg.errors.DataError as e:
            raise RecordError("", f"tick {tick}", f"PostgreSQL refused a row: {_first_line(e)}") from None
        except psycopg.Error as e:
            raise translated(e) from None

    def _apply(self, tick: int, rows, columns) -> None:
        cursor = self.conn.cursor()
        values = [[data.get(c.name) for c in columns] for data, _ in rows]
        if self.mode == "changelog":
            cursor.executemany(self._insert(columns, (TICK, WEIGHT)), [v + [tick, w] for v, (_, w) in zip(values, rows)])
        elif self.keys:
            keyed = [c for c in columns if c.name in self.keys]
            delete = sql.SQL("DELETE FROM {} WHERE {}").format(self.table, self._where(keyed))
            key_of = [[data.get(c.name) for c in keyed] for data, _ in rows]
            gone = [k for k, (_, w) in zip(key_of, rows) if w < 0]
            added = [(k, v) for k, v, (_, w) in zip(key_of, values, rows) if w > 0]
            if gone:
                cursor.executemany(delete, gone)
            if added:
                cursor.executemany(delete, [k for k, _ in added])
                cursor.executemany(self._insert(columns), [v for _, v in added])
        else:
            net: dict[str, list] = {}
            for v, (_, w) in zip(values, rows):
                entry = net.setdefault(json.dumps(v, sort_keys=True, default=str), [v, 0])
                entry[1] += w
            update = sql.SQL("UPDATE {} SET {} = {} + %s WHERE {}").format(
                self.table, sql.Identifier(COUNT), sql.Identifier(COUNT), self._where(columns))
            insert = self._insert(columns, (COUNT,))
            for v, w in net.values():
                if w == 0:
                    continue
                cursor.execute(update, [w, *v])
                if cursor.rowcount == 0:
                    cursor.execute(insert, [*v, w])
            cursor.execute(sql.SQL("DELETE FROM {} WHERE {} = 0").format(self.table, sql.Identifier(COUNT)))

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg.Error:
                pass
            self.conn = None


def _source_table(conn: psycopg.Connection, label: str) -> tuple[int, str, str]:
    """The source's table (oid, schema, name): there, with REPLICA IDENTITY FULL."""
    found = conn.execute(
        "SELECT c.oid, n.nspname, c.relname, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.oid = to_regclass(%s)", (label,)).fetchone()
    if found is None:
        raise ConfigError(f"table {label!r} is not there (schema-qualify it, as SQL would name it)")
    oid, namespace, name, identity = found
    if identity != "f":
        raise ConfigError(
            f"table {namespace}.{name} needs REPLICA IDENTITY FULL (an update and a delete must carry "
            f"the whole old row): run ALTER TABLE {sql.Identifier(namespace, name).as_string(conn)} REPLICA IDENTITY FULL")
    return oid, namespace, name


class ConnectionProbe:
    """The editor's Test connection (`opening.probe`): signs in and, for a source, checks
    the table and the role's REPLICATION, leaving nothing behind (no slot, publication
    or table, which opening the source or sink itself would make)."""

    def __init__(self, opening: Opening, source: bool):
        self.conn = connect(opening.config, opening.secrets, autocommit=True)
        with closed_on_failure(self):
            if source:
                _source_table(self.conn, opening.config.get("table") or "")
                if not self.conn.execute("SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"
                                         ).fetchone()[0]:
                    raise ConfigError("the role needs REPLICATION (ALTER ROLE ... REPLICATION) to read changes")

    def close(self) -> None:
        self.conn.close()


@contextmanager
def closed_on_failure(client):
    """A client being opened: whatever fails closes what it opened so far (a connection, a
    snapshot's), a PostgreSQL error translated (Transient or ConfigError)."""
    try:
        yield
    except psycopg.Error as e:
        client.close()
        raise translated(e) from None
    except BaseException:
        client.close()
        raise


def _opened(client, source: bool):
    """The kind's client for a run's connector, a ConnectionProbe for a connection test."""
    return lambda o: ConnectionProbe(o, source) if o.probe else client(o, _schema_of(o, source))


def _schema_of(opening: Opening, source: bool):
    if opening.schema is not None:  # the command line's plan
        return opening.schema
    from circuits.services import plan_for
    from runs.models import Run

    plan = plan_for(Run.objects.select_related("version").get(pk=opening.run_id).version)
    return (plan.inputs if source else plan.views)[opening.node]


def check_source(config: dict, schema) -> str | None:
    columns = config.get("columns")
    if columns is not None and schema is not None:
        if not isinstance(columns, dict) or not all(isinstance(v, str) for v in columns.values()):
            return "columns: an object mapping the input's columns to the table's"
        unknown = [c for c in columns if c not in schema.names]
        if unknown:
            return f"columns: {unknown[0]!r} is not a column of the input ({', '.join(schema.names)})"
    return check_dsn(config.get("dsn"))


KINDS = [
    KindSpec("postgres_source", True,
             frozenset({"dsn", "table", "columns", "max_batch", "password_env", "publication"}), ("dsn", "table"),
             _opened(PostgresSource, True),
             doc="a PostgreSQL table's snapshot, then its changes (logical replication, pgoutput)",
             check=check_source, drop=drop_source),
    KindSpec("postgres_sink", False, frozenset({"dsn", "table", "mode", "key", "password_env"}), ("dsn", "table"),
             _opened(PostgresSink, False),
             doc="keeps a view's contents in a table (or appends its changes), a tick per transaction",
             check=check_sink),
]
