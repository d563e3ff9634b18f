"""The Nexmark event generator: people, auctions and bids as Arrow tables, vectorised
with NumPy, deterministic by seed.

The model is Nexmark's as Feldera's generator (feldera/feldera crates/nexmark/src/
generator/) and Flink's (nexmark/nexmark) define it, with one event generator:

- Event n (0, 1, 2, ...) is a person when n % 50 < 1, an auction when n % 50 < 4, else
  a bid: the 1:3:46 mix. Its event time is `base_time + n * event_interval_ms`.
- Ids are dense and follow the event number: person n // 50 + 1000, auction
  (the auctions so far) + 1000.
- A bid's auction is a hot one (the last multiple of 100 of the auctions so far) with
  probability 1 - 1/hot_auction_ratio (1/2), else one of the last 100 auctions
  (`num_in_flight_auctions`); its bidder a hot one ((people so far // 100) * 100 + 1)
  with probability 1 - 1/hot_bidders_ratio (3/4), else one of the last 1,000 active
  people (ids up to 10 ahead of the newest, as Nexmark's lead). Sellers likewise
  (hot_sellers_ratio 4).
- Prices are ceil(10^(6u) * 100) for u uniform in [0, 1) (100 to 10^8 cents, log-uniform).
- An auction lasts 1 + uniform[0, 2 * horizon) ms, the horizon being the event time of
  the auction 100 auctions later; its category is one of 5 (10..14); its reserve is its
  initial bid plus another price.
- Bids come from one of 4 hot channels (Google, Facebook, Baidu, Apple, with their
  URLs) 99 times in 100, else from `channel-k` (k < 10,000) with a URL of its own,
  carrying `&channel_id=` 9 times in 10.
- `extra` pads each event to its average size (person 200, auction 500, bid 100 bytes)
  with alphanumeric text of +-20% around what the fields leave.

Random draws are made block by block (`BLOCK` events, a multiple of 50) from a NumPy
generator seeded with (seed, block number), so the events are the same for a seed
whatever size the batches are cut in.
"""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

PERSON_PROPORTION, AUCTION_PROPORTION, BID_PROPORTION = 1, 3, 46
TOTAL_PROPORTION = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION
FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
NUM_CATEGORIES = 5
PERSON_ID_LEAD = 10
HOT_AUCTION_RATIO_BASE = 100  # a hot auction/bidder/seller id is a multiple of this
CHANNELS_NUMBER = 10_000
HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]
HOT_URLS = [
    "https://www.nexmark.com/googl/item.htm?query=1",
    "https://www.nexmark.com/meta/item.htm?query=1",
    "https://www.nexmark.com/bidu/item.htm?query=1",
    "https://www.nexmark.com/aapl/item.htm?query=1",
]
US_STATES = ["AZ", "CA", "ID", "OR", "WA", "WY"]
US_CITIES = ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent",
             "Cheyenne"]
FIRST_NAMES = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"]
LAST_NAMES = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"]
ALPHANUMERIC = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
BLOCK = 10_000  # events drawn from one seeded NumPy generator
assert BLOCK % TOTAL_PROPORTION == 0

TS = pa.timestamp("us")
PERSON_SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("emailaddress", pa.string()),
                           ("creditcard", pa.string()), ("city", pa.string()), ("state", pa.string()),
                           ("date_time", TS), ("extra", pa.string())])
AUCTION_SCHEMA = pa.schema([("id", pa.int64()), ("itemname", pa.string()), ("description", pa.string()),
                            ("initialbid", pa.int64()), ("reserve", pa.int64()), ("date_time", TS),
                            ("expires", TS), ("seller", pa.int64()), ("category", pa.int64()),
                            ("extra", pa.string())])
BID_SCHEMA = pa.schema([("auction", pa.int64()), ("bidder", pa.int64()), ("price", pa.int64()),
                        ("channel", pa.string()), ("url", pa.string()), ("date_time", TS), ("extra", pa.string())])
SCHEMAS = {"person": PERSON_SCHEMA, "auction": AUCTION_SCHEMA, "bid": BID_SCHEMA}


@dataclass(frozen=True)
class Config:
    seed: int = 0
    #: event time of event 0 (naive UTC) and the event-time gap between events
    base_time: dt.datetime = dt.datetime(2025, 1, 1)
    event_interval_ms: int = 10
    hot_auction_ratio: int = 2
    hot_bidders_ratio: int = 4
    hot_sellers_ratio: int = 4
    num_active_people: int = 1000
    num_in_flight_auctions: int = 100
    avg_person_byte_size: int = 200
    avg_auction_byte_size: int = 500
    avg_bid_byte_size: int = 100

    def __post_init__(self):
        for name in ("event_interval_ms", "hot_auction_ratio", "hot_bidders_ratio", "hot_sellers_ratio",
                     "num_active_people", "num_in_flight_auctions"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"Config.{name} must be a whole number >= 1, got {value!r}")


# ---- ids, as Nexmark numbers them (vectorised over event numbers) ----

def last_base0_person_id(n: np.ndarray) -> np.ndarray:
    epoch, offset = np.divmod(n, TOTAL_PROPORTION)
    return epoch * PERSON_PROPORTION + np.minimum(offset, PERSON_PROPORTION - 1)


def last_base0_auction_id(n: np.ndarray) -> np.ndarray:
    epoch, offset = np.divmod(n, TOTAL_PROPORTION)
    before = offset < PERSON_PROPORTION  # a person: the previous epoch's last auction
    after = offset >= PERSON_PROPORTION + AUCTION_PROPORTION
    result = np.where(before, (epoch - 1) * AUCTION_PROPORTION + AUCTION_PROPORTION - 1,
                      epoch * AUCTION_PROPORTION + np.where(after, AUCTION_PROPORTION - 1, offset - PERSON_PROPORTION))
    return np.where(before & (epoch == 0), 0, result)


def next_base0_person_id(n: np.ndarray, rng: np.random.Generator, cfg: Config) -> np.ndarray:
    num_people = last_base0_person_id(n) + 1
    active = np.minimum(num_people, cfg.num_active_people)
    return num_people - active + (rng.random(len(n)) * (active + PERSON_ID_LEAD)).astype(np.int64)


def next_base0_auction_id(n: np.ndarray, rng: np.random.Generator, cfg: Config) -> np.ndarray:
    top = last_base0_auction_id(n)
    bottom = np.maximum(top - cfg.num_in_flight_auctions, 0)
    return bottom + (rng.random(len(n)) * (top - bottom + 1)).astype(np.int64)


def prices(rng: np.random.Generator, size: int) -> np.ndarray:
    return np.ceil(np.power(10.0, rng.random(size) * 6.0) * 100.0).astype(np.int64)


# ---- strings: one random byte buffer cut by offsets into an Arrow string array ----

def random_strings(rng: np.random.Generator, lengths: np.ndarray) -> pa.Array:
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = ALPHANUMERIC[rng.integers(0, len(ALPHANUMERIC), int(offsets[-1]))]
    return pa.StringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(data.tobytes()))


def string_lengths(rng: np.random.Generator, size: int, max_length: int) -> np.ndarray:
    return rng.integers(3, max_length + 1, size)  # Nexmark's next_string: 3..=max_length


def extra_lengths(rng: np.random.Generator, current: np.ndarray | int, average: int) -> np.ndarray:
    """Nexmark's next_extra: uniform in avg +- 20% of what the fields leave (0 when none)."""
    room = np.maximum(average - np.asarray(current, dtype=np.int64), 0)
    delta = np.round(room * 0.2).astype(np.int64)
    size = len(current) if np.ndim(current) else 1
    lengths = room - delta + (rng.random(size) * (2 * delta + 1)).astype(np.int64)
    return np.where(delta == 0, 0, lengths)


def pick(rng: np.random.Generator, choices: list[str], size: int) -> tuple[pa.Array, np.ndarray]:
    index = rng.integers(0, len(choices), size)
    return pa.DictionaryArray.from_arrays(pa.array(index, pa.int32()), pa.array(choices)).cast(pa.string()), index


def _join(parts: list[pa.Array]) -> pa.Array:
    out = parts[0]
    for p in parts[1:]:
        out = pc.binary_join_element_wise(out, p, "")
    return out


def channel_urls(cfg_seed: int) -> tuple[list[str], list[str]]:
    """The 10,000 cold channels' names and URLs (a fixed table, as Nexmark caches them)."""
    rng = np.random.default_rng([cfg_seed, 1 << 40])
    paths = random_strings(rng, string_lengths(rng, CHANNELS_NUMBER, 5)).to_pylist()
    with_id = rng.integers(0, 10, CHANNELS_NUMBER) != 9
    names, urls = [], []
    for k in range(CHANNELS_NUMBER):
        url = f"https://www.nexmark.com/{paths[k]}/item.htm?query=1"
        if with_id[k]:
            url += f"&channel_id={int(f'{k:032b}'[::-1], 2)}"  # Nexmark's channel_number.reverse_bits()
        names.append(f"channel-{k}")
        urls.append(url)
    return names, urls


class NexmarkGenerator:
    """Events [0, max_events) as batches of {"person", "auction", "bid"} Arrow tables."""

    def __init__(self, config: Config = Config()):
        self.config = config
        base = np.datetime64(config.base_time.replace(tzinfo=None), "us")
        self._base_us = base.astype(np.int64)
        names, urls = channel_urls(config.seed)
        self._channels = pa.array(HOT_CHANNELS + names)
        self._urls = pa.array(HOT_URLS + urls)

    def timestamps_us(self, n: np.ndarray) -> np.ndarray:
        return self._base_us + n * (self.config.event_interval_ms * 1000)

    def block(self, index: int) -> dict[str, pa.Table]:
        """Events [index * BLOCK, (index + 1) * BLOCK)."""
        rng = np.random.default_rng([self.config.seed, index])
        n = np.arange(index * BLOCK, (index + 1) * BLOCK, dtype=np.int64)
        rem = n % TOTAL_PROPORTION
        return {"person": self._people(n[rem < PERSON_PROPORTION], rng),
                "auction": self._auctions(n[(rem >= PERSON_PROPORTION) & (rem < PERSON_PROPORTION + AUCTION_PROPORTION)], rng),
                "bid": self._bids(n[rem >= PERSON_PROPORTION + AUCTION_PROPORTION], rng)}

    def _people(self, n, rng):
        cfg, size = self.config, len(n)
        first, _ = pick(rng, FIRST_NAMES, size)
        last, _ = pick(rng, LAST_NAMES, size)
        name = _join([first, pa.array([" "] * size), last])
        user_len, host_len = string_lengths(rng, size, 7), string_lengths(rng, size, 5)
        email = _join([random_strings(rng, user_len), pa.array(["@"] * size), random_strings(rng, host_len),
                       pa.array([".com"] * size)])
        digits = rng.integers(0, 10_000, (size, 4))
        card = pa.array([f"{a:04d} {b:04d} {c:04d} {d:04d}" for a, b, c, d in digits.tolist()], pa.string())
        city, city_i = pick(rng, US_CITIES, size)
        state, state_i = pick(rng, US_STATES, size)
        name_len = pc.utf8_length(name).to_numpy()
        current = 8 + name_len + (user_len + host_len + 5) + 19 + np.array([len(c) for c in US_CITIES])[city_i] + 2
        extra = random_strings(rng, extra_lengths(rng, current, cfg.avg_person_byte_size))
        return pa.Table.from_arrays([
            pa.array(last_base0_person_id(n) + FIRST_PERSON_ID), name, email, card, city, state,
            pa.array(self.timestamps_us(n), TS), extra], schema=PERSON_SCHEMA)

    def _auctions(self, n, rng):
        cfg, size = self.config, len(n)
        hot = (rng.random(size) * cfg.hot_sellers_ratio).astype(np.int64) != 0
        cold_seller = next_base0_person_id(n, rng, cfg)
        hot_seller = (last_base0_person_id(n) // HOT_AUCTION_RATIO_BASE) * HOT_AUCTION_RATIO_BASE
        seller = np.where(hot, hot_seller, cold_seller) + FIRST_PERSON_ID
        category = FIRST_CATEGORY_ID + rng.integers(0, NUM_CATEGORIES, size)
        initial = prices(rng, size)
        ts = self.timestamps_us(n)
        ahead = cfg.num_in_flight_auctions * TOTAL_PROPORTION // AUCTION_PROPORTION
        horizon_ms = ahead * cfg.event_interval_ms
        length_ms = 1 + (rng.random(size) * max(2 * horizon_ms, 1)).astype(np.int64)
        item_len, desc_len = string_lengths(rng, size, 20), string_lengths(rng, size, 100)
        item, desc = random_strings(rng, item_len), random_strings(rng, desc_len)
        reserve = initial + prices(rng, size)
        current = 8 + item_len + desc_len + 8 * 3 + 8 * 2
        extra = random_strings(rng, extra_lengths(rng, current, cfg.avg_auction_byte_size))
        return pa.Table.from_arrays([
            pa.array(last_base0_auction_id(n) + FIRST_AUCTION_ID), item, desc, pa.array(initial), pa.array(reserve),
            pa.array(ts, TS), pa.array(ts + length_ms * 1000, TS), pa.array(seller), pa.array(category), extra],
            schema=AUCTION_SCHEMA)

    def _bids(self, n, rng):
        cfg, size = self.config, len(n)
        hot_auction = (rng.random(size) * cfg.hot_auction_ratio).astype(np.int64) != 0
        auction = np.where(hot_auction, (last_base0_auction_id(n) // HOT_AUCTION_RATIO_BASE) * HOT_AUCTION_RATIO_BASE,
                           next_base0_auction_id(n, rng, cfg)) + FIRST_AUCTION_ID
        hot_bidder = (rng.random(size) * cfg.hot_bidders_ratio).astype(np.int64) != 0
        bidder = np.where(hot_bidder, (last_base0_person_id(n) // HOT_AUCTION_RATIO_BASE) * HOT_AUCTION_RATIO_BASE + 1,
                          next_base0_person_id(n, rng, cfg)) + FIRST_PERSON_ID
        price = prices(rng, size)
        cold = rng.integers(1, 101, size) == 100  # 1 in 100 bids from a cold channel
        which = np.where(cold, len(HOT_CHANNELS) + rng.integers(0, CHANNELS_NUMBER, size),
                         rng.integers(0, len(HOT_CHANNELS), size))
        take = pa.array(which)
        extra = random_strings(rng, extra_lengths(rng, np.full(size, 8 * 3 + 8), cfg.avg_bid_byte_size))
        return pa.Table.from_arrays([
            pa.array(auction), pa.array(bidder), pa.array(price), self._channels.take(take), self._urls.take(take),
            pa.array(self.timestamps_us(n), TS), extra], schema=BID_SCHEMA)

    def batches(self, events: int, batch_size: int, rate: float | None = None, start: int = 0) -> Iterator[dict[str, pa.Table]]:
        """Events [start, start + events) in batches of `batch_size` events each (the last
        one smaller), as {"person", "auction", "bid"} tables. `rate` (events/s of wall
        time), when given, paces the batches: batch k is yielded no sooner than
        k * batch_size / rate seconds after the first; None: as fast as possible."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        end, began, cached = start + events, time.perf_counter(), {}
        for k, lo in enumerate(range(start, end, batch_size)):
            hi = min(lo + batch_size, end)
            if rate:
                wait = began + (lo - start) / rate - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
            yield self.events(lo, hi, cached)

    def events(self, lo: int, hi: int, cached: dict | None = None) -> dict[str, pa.Table]:
        """The events numbered [lo, hi), as tables."""
        cached = {} if cached is None else cached
        parts = {name: [] for name in SCHEMAS}
        for b in range(lo // BLOCK, (hi - 1) // BLOCK + 1):
            if b not in cached:
                cached.clear()  # batches move forward: keep one block
                cached[b] = self.block(b)
            for name, table in cached[b].items():
                number = self.event_numbers(name, table)
                mask = (number >= lo) & (number < hi)
                parts[name].append(table.filter(pa.array(mask)))
        return {name: pa.concat_tables(ts) if len(ts) > 1 else ts[0] for name, ts in parts.items()}

    def event_numbers(self, name: str, table: pa.Table) -> np.ndarray:
        us = table.column("date_time").cast(pa.int64()).to_numpy()
        return (us - self._base_us) // (self.config.event_interval_ms * 1000)


def generate(events: int, seed: int = 0, batch_size: int = 10_000, **config) -> Iterator[dict[str, pa.Table]]:
    return NexmarkGenerator(Config(seed=seed, **config)).batches(events, batch_size)
