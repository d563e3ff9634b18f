"""A source of random rows that fit its input's schema, at a set rate, on the worker: the
dashboard's row generator (frontend/src/dashboard/generator.ts) made a connector, with the
same value rules, or (option `plan`) the rows of a Feldera datagen plan (connectors/datagen.py;
SQL's `"transport": {"name": "datagen"}`). Row n is a function of the seed and n alone, and the position is the
number of rows pushed, so a restart goes on with the same sequence: no duplicate, no gap."""
from __future__ import annotations

import datetime as dt
import random
import re
import time

from dbsp.types import Column, element_type

from . import datagen
from .errors import ConfigError
from .kinds import KindSpec

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima")
KEYISH = re.compile(r"(acct|account|customer|user|group|category|key|node|src|dst|from|to)", re.I)
IDISH = re.compile(r"(^id$|_id$)", re.I)
YEAR_START = dt.datetime(2026, 1, 1)
DEFAULT_RATE = 10.0
MAX_RATE = 1_000_000.0  # also a plan's default (Feldera's datagen runs as fast as it can)
BURST_SECONDS = 2.0  # rows owed never build up past this many seconds' worth (as the dashboard's)


def _element(type_: str, rng: random.Random):
    if type_ == "bigint":
        return rng.randint(1, 100)
    if type_ == "double":
        return round(rng.random() * 10_000) / 100
    if type_ == "boolean":
        return rng.random() < 0.5
    return rng.choice(WORDS)


def value(column: Column, rng: random.Random, serial: int):
    """A value for the column; `serial` numbers the rows (1, 2, ...): id columns take it."""
    element = element_type(column.type)
    if element:
        return [_element(element, rng) for _ in range(rng.randint(0, 4))]
    if column.type == "bigint":
        if IDISH.search(column.name):
            return serial
        return rng.randint(1, 5) if KEYISH.search(column.name) else rng.randint(1, 1000)
    if column.type == "double":
        return round(rng.random() * 100_000) / 100
    if column.type == "boolean":
        return rng.random() < 0.5
    if column.type == "string":
        return rng.choice(WORDS)
    if column.type == "date":
        return (YEAR_START + dt.timedelta(days=rng.randint(0, 364))).date().isoformat()
    if column.type == "timestamp":
        return (YEAR_START + dt.timedelta(seconds=rng.randint(0, 365 * 86_400 - 1))).isoformat()
    return None


def row(schema, seed: int, n: int) -> dict:
    """The n-th row (from 0) of the sequence of `seed`: the same on every machine and run."""
    rng = random.Random(f"dbspweb-generator:{seed}:{n}")
    return {c.name: value(c, rng, n + 1) for c in schema.columns}


class GeneratorSource:
    """Emits `rate` rows a second (inserts), `limit` in all (none: no end). Its position
    is `{"emitted": n}`: rows 0 to n-1 are pushed."""

    def __init__(self, config: dict, position: dict):
        problem = _check(config, None)
        if problem:
            raise ConfigError(problem)
        self.plan = config.get("plan")  # Feldera's datagen plan (connectors/datagen.py): its rows, not random ones
        self.rate = float(config.get("rate", DEFAULT_RATE if self.plan is None else MAX_RATE))
        self.limit, self.seed = config.get("limit"), int(config.get("seed", 0))
        if self.plan is not None and datagen.plan_size(self.plan) is not None:
            size = datagen.plan_size(self.plan)
            self.limit = size if self.limit is None else min(self.limit, size)
        self.emitted = int((position or {}).get("emitted", 0))
        self.owed, self.last = 0.0, time.monotonic()

    def position(self) -> dict:
        return {"emitted": self.emitted}

    def poll(self, limit: int, decode, schema):
        now = time.monotonic()
        self.owed = min(self.owed + (now - self.last) * self.rate, max(1.0, self.rate * BURST_SECONDS))
        self.last = now
        count = min(int(self.owed), limit)
        if self.limit is not None:
            count = min(count, self.limit - self.emitted)
        if count <= 0:
            return [], self.position()
        self.owed -= count
        start = self.emitted
        if self.plan is not None:
            rows = datagen.plan_rows(self.plan, [(c.name, c.type) for c in schema.columns], self.seed, start, start + count)
            items = [(f"datagen#{n}", [{"insert": r}]) for n, r in enumerate(rows, start)]
            count = len(rows)
        else:
            items = [(f"generator#{n}", [{"insert": row(schema, self.seed, n)}]) for n in range(start, start + count)]
        return items, {"emitted": start + count}

    def advanced(self, position: dict) -> None:
        self.emitted = position["emitted"]

    def close(self) -> None:
        pass


def _number(config: dict, key: str) -> bool:
    return key not in config or (type(config[key]) in (int, float))


def _check(config: dict, schema) -> str | None:
    if not _number(config, "rate") or not 0 < config.get("rate", DEFAULT_RATE) <= MAX_RATE:
        return "rate: rows per second, a number above 0 (at most 1000000)"
    if "plan" in config and (problem := datagen.check_plan(config["plan"])):
        return problem
    if config.get("limit") is not None and (type(config["limit"]) is not int or config["limit"] < 0):
        return "limit: the number of rows in all, an integer (0 or more); leave it out for no end"
    if "seed" in config and type(config["seed"]) is not int:
        return "seed: an integer (the same seed gives the same rows)"
    return None


KINDS = [
    KindSpec("generator_source", True, frozenset({"rate", "limit", "seed", "max_batch", "plan"}), (),
             lambda o: GeneratorSource(o.config, o.position),
             doc="random rows that fit the input's schema, at a set rate, the same for the same seed; with `plan`, "
                 "the rows of a Feldera datagen plan (SQL's `datagen` transport)", check=_check),
]
