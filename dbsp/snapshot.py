"""Snapshot and restore of a run's state, so a run can resume in another process.

What is saved is the *state* of every executor — traces (as their consolidated rows),
accumulators, the previous values of z^-1 and D, per-iteration executors of fixed
points — and the tick reached. What is not saved is what the plan rebuilds: operators,
schemas, compiled expressions, the Spark session. Restoring builds a fresh runtime from
the same plan and loads the saved state into its executors, attribute by attribute:

- attributes whose name starts with `_`, and references to the runtime, operators,
  schemas, documents and functions, are configuration: the fresh runtime's are kept;
- an object with `snapshot_state()` (a trace, a change batch) saves what that returns
  and is rebuilt by `restore_state(state, ctx)` on the fresh object (or its class);
- lists, tuples and dicts are walked; other values (Z-sets, Arrow tables, numbers) are
  saved as they are.

The file is a pickle written by the worker itself into its own snapshot directory
(never read from users), replaced atomically. `fingerprint` ties a snapshot to the
plan's document: restoring into a different circuit is refused.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path

FORMAT = 1
FILE = "state.pkl"


class SnapshotMismatch(ValueError):
    """A snapshot that does not belong to this plan (or is unreadable)."""


class _Keep:
    def __repr__(self):
        return "KEEP"

    def __reduce__(self):  # unpickles as the module's one KEEP (compared by identity)
        return "KEEP"


KEEP = _Keep()


class _Saved:
    """A value saved through its object's snapshot_state(); rebuilt by restore_state."""

    def __init__(self, cls, state):
        self.cls, self.state = cls, state


class _Object:
    """An executor-like object: its state attributes."""

    def __init__(self, cls_name: str, attrs: dict):
        self.cls_name, self.attrs = cls_name, attrs


def fingerprint(plan) -> str:
    return hashlib.sha256(json.dumps(plan.document.to_json(), sort_keys=True, default=str).encode()).hexdigest()


def _configuration(value, ctx) -> bool:
    from .document import CircuitDocument
    from .operators.base import Operator
    from .types import Schema
    from .validate import Validated

    return value is ctx or callable(value) or isinstance(value, (Operator, Schema, Validated, CircuitDocument))


def dump(value, ctx):
    if _configuration(value, ctx):
        return KEEP
    if hasattr(value, "snapshot_state"):
        return _Saved(type(value), value.snapshot_state())
    if isinstance(value, list):
        return [dump(v, ctx) for v in value]
    if isinstance(value, tuple):
        return tuple(dump(v, ctx) for v in value)
    if isinstance(value, dict):
        return {k: dump(v, ctx) for k, v in value.items()}
    if hasattr(value, "__dict__") and not _is_plain(value):
        return _Object(type(value).__name__, {
            k: (KEEP if k.startswith("_") else dump(v, ctx)) for k, v in vars(value).items()})
    return value


def _is_plain(value) -> bool:
    """Values pickled as they are (Z-sets and other immutable data)."""
    from .zset import ZSet

    return isinstance(value, ZSet)


def load(fresh, saved, ctx, like=None):
    """The value `saved` describes, built into (or beside) the fresh runtime's `fresh`.
    `like`: an example object to copy when a saved list is longer than the fresh one."""
    if saved is KEEP:
        return fresh
    if isinstance(saved, _Saved):
        return saved.cls.restore_state(saved.state, ctx, fresh if isinstance(fresh, saved.cls) else None)
    if isinstance(saved, _Object):
        target = fresh if fresh is not None else copy.deepcopy(like, {id(ctx): ctx}) if like is not None else None
        if target is None or type(target).__name__ != saved.cls_name:
            raise SnapshotMismatch(f"the snapshot holds a {saved.cls_name} where this plan has {type(target).__name__}")
        for k, v in saved.attrs.items():
            if v is not KEEP:
                setattr(target, k, load(getattr(target, k, None), v, ctx))
        return target
    if isinstance(saved, list):
        fresh = fresh if isinstance(fresh, list) else []
        example = fresh[0] if fresh else None
        return [load(fresh[i] if i < len(fresh) else None, v, ctx, like=example) for i, v in enumerate(saved)]
    if isinstance(saved, tuple):
        fresh = fresh if isinstance(fresh, tuple) else ()
        return tuple(load(fresh[i] if i < len(fresh) else None, v, ctx) for i, v in enumerate(saved))
    if isinstance(saved, dict):
        fresh = fresh if isinstance(fresh, dict) else {}
        example = next(iter(fresh.values()), None)
        return {k: load(fresh.get(k), v, ctx, like=example) for k, v in saved.items()}
    return saved


def write(runtime, directory) -> Path:
    """Save the runtime's state and tick into `directory` (created; replaced atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "fingerprint": fingerprint(runtime.plan),
        "tick": runtime.tick,
        "executors": {n: dump(e, runtime) for n, e in runtime.executors.items()},
    }
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".state-", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
        f.flush()
        os.fsync(f.fileno())
    path = directory / FILE
    os.replace(tmp, path)
    return path


def read_into(runtime, directory) -> None:
    """Load a snapshot written by `write` into a fresh runtime of the same plan."""
    path = Path(directory) / FILE
    try:
        with open(path, "rb") as f:
            payload = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError) as e:
        raise SnapshotMismatch(f"cannot read the snapshot at {path}: {e}") from e
    if payload.get("format") != FORMAT:
        raise SnapshotMismatch(f"snapshot format {payload.get('format')!r} is not {FORMAT}")
    if payload["fingerprint"] != fingerprint(runtime.plan):
        raise SnapshotMismatch("the snapshot was taken from a different circuit document")
    if set(payload["executors"]) != set(runtime.executors):
        raise SnapshotMismatch("the snapshot's nodes differ from this plan's")
    for node_id, saved in payload["executors"].items():
        runtime.executors[node_id] = load(runtime.executors[node_id], saved, runtime)
    runtime.tick = payload["tick"]
