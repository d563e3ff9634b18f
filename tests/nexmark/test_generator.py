"""The Nexmark generator (connectors/nexmark_events.py): the model's mix, ids, skew and
event time, and determinism by seed whatever the batch size."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from connectors.nexmark_events import BLOCK, Config, NexmarkGenerator

EVENTS = 25_000  # crosses a block boundary (BLOCK = 10,000)


@pytest.fixture(scope="module")
def events():
    return NexmarkGenerator(Config(seed=7)).events(0, EVENTS)


def test_mix_is_1_3_46(events):
    counts = {name: t.num_rows for name, t in events.items()}
    assert counts == {"person": EVENTS // 50, "auction": EVENTS * 3 // 50, "bid": EVENTS * 46 // 50}


def test_event_time_follows_the_event_number(events):
    """Every event's time is base + n * interval: merged, the three streams give each
    step of 10 ms exactly once, in order."""
    times = np.sort(np.concatenate([t.column("date_time").cast(pa.int64()).to_numpy() for t in events.values()]))
    steps = np.diff(times)
    assert len(times) == EVENTS and (steps == 10_000).all()  # microseconds
    for table in events.values():  # each stream on its own is in time order
        assert (np.diff(table.column("date_time").cast(pa.int64()).to_numpy()) > 0).all()


def test_ids_are_dense_and_bids_refer_to_known_or_recent_entities(events):
    people = events["person"].column("id").to_numpy()
    auctions = events["auction"].column("id").to_numpy()
    assert (people == np.arange(1000, 1000 + len(people))).all()
    assert (auctions == np.arange(1000, 1000 + len(auctions))).all()
    bids = events["bid"].to_pydict()
    assert min(bids["auction"]) >= 1000 and max(bids["auction"]) <= auctions.max()
    assert max(bids["bidder"]) <= people.max() + 10  # Nexmark's lead of 10 ids


def test_hot_auctions_and_bidders_dominate(events):
    """Half the bids go to the hot auction (the last multiple of 100) and three in four
    come from the hot bidder, so a handful of keys hold most bids."""
    bids = events["bid"].to_pydict()
    n = len(bids["auction"])
    hot_auctions = sum(1 for a in bids["auction"] if (a - 1000) % 100 == 0)
    hot_bidders = sum(1 for b in bids["bidder"] if (b - 1000) % 100 == 1)
    assert 0.45 < hot_auctions / n < 0.60
    assert 0.70 < hot_bidders / n < 0.80
    auctions = events["auction"].num_rows
    top = Counter(bids["auction"]).most_common(auctions // 100 + 1)  # about 1% of the auctions
    assert sum(c for _, c in top) / n > 0.45
    channels = Counter(bids["channel"])
    assert set(ch for ch, _ in channels.most_common(4)) == {"Google", "Facebook", "Baidu", "Apple"}
    assert 0.97 < sum(channels[c] for c in ("Google", "Facebook", "Baidu", "Apple")) / n < 1.0


def test_auction_fields_are_consistent(events):
    a = events["auction"].to_pydict()
    assert all(r >= i for r, i in zip(a["reserve"], a["initialbid"]))
    assert all(e > d for e, d in zip(a["expires"], a["date_time"]))
    assert set(a["category"]) == {10, 11, 12, 13, 14}
    prices = events["bid"].column("price").to_numpy()
    assert prices.min() >= 100 and prices.max() <= 100_000_000
    assert 0.3 < np.mean(prices < 10_000) < 0.37  # log-uniform: 2 of 6 decades below 10^4


def test_deterministic_by_seed_whatever_the_batches():
    gen = NexmarkGenerator(Config(seed=3))
    whole = gen.events(0, 2 * BLOCK + 500)
    cut = list(NexmarkGenerator(Config(seed=3)).batches(2 * BLOCK + 500, batch_size=3_333))
    for name, table in whole.items():
        assert pa.concat_tables([b[name] for b in cut]).equals(table)
    other = NexmarkGenerator(Config(seed=4)).events(0, 2 * BLOCK + 500)
    assert not other["bid"].equals(whole["bid"])
    assert other["bid"].column("date_time").equals(whole["bid"].column("date_time"))


def test_rate_paces_the_batches():
    import time

    gen = NexmarkGenerator(Config(seed=1))
    t0 = time.perf_counter()
    batches = list(gen.batches(2_000, batch_size=500, rate=10_000))  # 4 batches, the last at 0.15 s
    assert len(batches) == 4 and time.perf_counter() - t0 >= 0.15


@pytest.mark.parametrize("field, value", [("event_interval_ms", 0), ("hot_auction_ratio", -1), ("num_active_people", 1.5)])
def test_a_bad_setting_is_named(field, value):
    with pytest.raises(ValueError, match=f"Config.{field} must be a whole number >= 1"):
        Config(**{field: value})
