"""The pgoutput decoder as it was before its tuple reader was rewritten for speed (one
struct.unpack per field): the oracle tests/connectors/test_pgoutput.py compares the
product's decoder with, on the same bytes (values, and the error of every cut)."""
from __future__ import annotations

import struct

from connectors.pgoutput import UNCHANGED, Begin, Change, Commit, DecodeError, Other, Relation, Truncate


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
        values = []
        for _ in range(self.take(">h")):
            kind = self.take(">c")
            if kind == b"n":
                values.append(None)
            elif kind == b"u":
                values.append(UNCHANGED)
            elif kind == b"t":
                size = self.take(">i")
                if self.at + size > len(self.data):
                    raise DecodeError(f"value cut short at byte {self.at}")
                values.append(self.data[self.at:self.at + size].decode("utf-8"))
                self.at += size
            else:
                raise DecodeError(f"unknown tuple value kind {kind!r} at byte {self.at - 1}")
        return values



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
