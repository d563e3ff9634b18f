"""PostgreSQL's `pgoutput` logical decoding messages (protocol version 1), decoded from the
bytes `pg_logical_slot_peek_binary_changes` returns, one message a row.

Written here (about a hundred lines) because the PyPI decoders are unmaintained
(pypgoutput 0.0.3, 2022) or new and native (pgoutput-decoder 0.1.0); the format is
small and documented: https://www.postgresql.org/docs/current/protocol-logicalrep-message-formats.html

Values arrive as text (the column type's output function), None for NULL, and
`UNCHANGED` for a TOASTed value an update did not change (take it from the old row).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field


class DecodeError(ValueError):
    """Bytes that are not a pgoutput message of protocol version 1."""


UNCHANGED = object()


def lsn_text(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_int(text: str) -> int:
    high, _, low = str(text).partition("/")
    return (int(high, 16) << 32) | int(low, 16)


@dataclass
class Begin:
    final_lsn: int
    xid: int


@dataclass
class Commit:
    commit_lsn: int
    end_lsn: int


@dataclass
class Relation:
    relid: int
    namespace: str
    name: str
    replica_identity: str  # d default, n nothing, f full, i index
    columns: list[tuple[str, int]]  # (name, type oid)


@dataclass
class Change:
    """An insert (new), an update (old if the replica identity sent it, and new) or a delete (old)."""

    op: str  # "I", "U", "D"
    relid: int
    old: list | None = None
    new: list | None = None
    old_is_key: bool = False  # old carries only the key columns (replica identity not FULL)


@dataclass
class Truncate:
    relids: list[int] = field(default_factory=list)


@dataclass
class Other:
    kind: str  # an Origin, Type or logical Message: nothing to apply


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise DecodeError(f"message cut short at byte {self.at}")
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        end = self.data.find(b"\0", self.at)
        if end < 0:
            raise DecodeError(f"unterminated string at byte {self.at}")
        text = self.data[self.at:end].decode("utf-8")
        self.at = end + 1
        return text

    def tuple(self) -> list:
        # the hot loop of a change stream: a value's kind and length read in place (no
        # struct per field); the errors are those of take()
        data, at, end = self.data, self.at, len(self.data)
        if at + 2 > end:
            raise DecodeError(f"message cut short at byte {at}")
        count = _SHORT(data, at)[0]
        at += 2
        values = []
        append = values.append
        for _ in range(count):
            if at >= end:
                raise DecodeError(f"message cut short at byte {at}")
            kind = data[at]
            at += 1
            if kind == 0x74:  # t
                if at + 4 > end:
                    raise DecodeError(f"message cut short at byte {at}")
                size = _INT(data, at)[0]
                at += 4
                if at + size > end:
                    raise DecodeError(f"value cut short at byte {at}")
                append(data[at:at + size].decode("utf-8"))
                at += size
            elif kind == 0x6E:  # n
                append(None)
            elif kind == 0x75:  # u
                append(UNCHANGED)
            else:
                raise DecodeError(f"unknown tuple value kind {bytes([kind])!r} at byte {at - 1}")
        self.at = at
        return values


_SHORT, _INT = struct.Struct(">h").unpack_from, struct.Struct(">i").unpack_from


def decode(data: bytes):
    """One message: Begin, Commit, Relation, Change, Truncate or Other."""
    data = bytes(data)
    if not data:
        raise DecodeError("an empty message")
    r, kind = _Reader(data), data[:1]
    r.at = 1
    if kind == b"B":
        final_lsn, _timestamp, xid = r.take(">qqI")
        return Begin(final_lsn, xid)
    if kind == b"C":
        _flags, commit_lsn, end_lsn, _timestamp = r.take(">bqqq")
        return Commit(commit_lsn, end_lsn)
    if kind == b"R":
        relid = r.take(">I")
        namespace, name = r.string(), r.string()
        identity = chr(r.take(">B"))
        columns = []
        for _ in range(r.take(">h")):
            _flags = r.take(">b")
            column = r.string()
            type_oid, _typmod = r.take(">Ii")
            columns.append((column, type_oid))
        return Relation(relid, namespace, name, identity, columns)
    if kind == b"I":
        relid = r.take(">I")
        if r.take(">c") != b"N":
            raise DecodeError("insert without its new tuple")
        return Change("I", relid, new=r.tuple())
    if kind == b"U":
        relid = r.take(">I")
        change = Change("U", relid)
        marker = r.take(">c")
        if marker in (b"K", b"O"):
            change.old, change.old_is_key = r.tuple(), marker == b"K"
            marker = r.take(">c")
        if marker != b"N":
            raise DecodeError(f"update without its new tuple (got {marker!r})")
        change.new = r.tuple()
        return change
    if kind == b"D":
        relid = r.take(">I")
        marker = r.take(">c")
        if marker not in (b"K", b"O"):
            raise DecodeError(f"delete without its old tuple (got {marker!r})")
        return Change("D", relid, old=r.tuple(), old_is_key=marker == b"K")
    if kind == b"T":
        count, _options = r.take(">ib")
        return Truncate([r.take(">I") for _ in range(count)])
    if kind in (b"O", b"Y", b"M"):
        return Other(kind.decode())
    raise DecodeError(f"unknown message kind {kind!r}")
