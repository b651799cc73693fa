"""Nexmark's event generator in numpy: persons, auctions and bids as three CSV tables.

A port of the model in nexmark/nexmark (nexmark-flink/.../generator, Apache License 2.0; the
facts are in docs/design/nexmark.md), vectorized over event numbers, deterministic by seed:

- event k (0-based) has id k + 2; ``id % 50`` makes it a person (0), an auction (1-3) or a bid;
- its time is ``base + trunc((k + 1) * 1e6 / rate) // 1000`` ms (one generator);
- ids, hot sellers / auctions / bidders (batches of 100, probabilities 3/4, 1/2, 3/4), prices
  (log-uniform), strings, extras and channels follow the Java code, bidder's doubled
  ``FIRST_PERSON_ID`` (+2000) included;
- out of order as Nexmark's original config has it (``probDelayedEvent`` 0.1,
  ``occasionalDelaySec`` 3, which nexmark-flink carries but does not use): a tenth of the
  events are written up to 3 s of event time after their place, less than the queries'
  4-second watermark delay, so no row is late and batch equals stream.

Randomness comes from numpy's PCG64 seeded per table and chunk, not Java's SplittableRandom:
the distributions are Nexmark's, the values are not Flink's (Flink's own runs are unseeded).

    .venv/bin/python benchmarks/nexmark/generate.py --events 1000000 --out DIR [--seed 1]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

PROPORTION = 50  # person 1 : auction 3 : bid 46
FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
NUM_CATEGORIES = 5
ACTIVE_PEOPLE = 1000
IN_FLIGHT_AUCTIONS = 100
ID_LEAD = 10
HOT_BATCH = 100  # hot ids are the first of the last 100
AUCTION_LENGTH_EVENTS = 100 * PROPORTION // 3  # expires: ts(e + 1666) - ts(e)
EXTRA_POOL = 1 << 20
CHUNK = 1 << 18  # rows per generated piece; fixed so the output depends on seed and N only
DEFAULT_BASE = "2026-01-01 23:59:40"  # the check's 50 s then cross midnight (days, hours)

FIRST_NAMES = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah",
               "Deiter", "Walter"]
LAST_NAMES = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones",
              "Noris"]
US_CITIES = ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond",
             "Seattle", "Kent", "Cheyenne"]
US_STATES = ["AZ", "CA", "ID", "OR", "WA", "WY"]
HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]
CHANNELS = 10_000
SIDE_INPUT_ROWS = 10_000

SCHEMAS = {
    "person": ["id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"],
    "auction": ["id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires",
                "seller", "category", "extra"],
    "bid": ["auction", "bidder", "price", "channel", "url", "dateTime", "extra"],
}
TABLE_SEED = {"person": 0, "auction": 1, "bid": 2}


class Clock:
    """Event number -> event time in ms (Nexmark's one-generator timeline)."""

    def __init__(self, rate: int, base_ms: int) -> None:
        self.delay_us = 1_000_000.0 / rate
        self.base_ms = base_ms

    def ts(self, k: np.ndarray) -> np.ndarray:
        return self.base_ms + np.floor((k + 1) * self.delay_us).astype(np.int64) // 1000


# ---- primitive draws -------------------------------------------------------------------------

def _strings(rng: np.random.Generator, n: int, max_len: int, special: int = ord(" "),
             trim: bool = True) -> pa.Array:
    """``nextString(max)``: 3..max-1 chars of a-z, 1 in 13 ``special``, then trimmed."""
    lengths = 3 + rng.integers(0, max_len - 3, n)
    width = max_len - 1
    chars = (ord("a") + rng.integers(0, 26, (n, width))).astype(np.uint8)
    chars[rng.integers(0, 13, (n, width)) == 0] = special
    col = np.arange(width)
    keep = col[None, :] < lengths[:, None]
    if trim:
        solid = keep & (chars != ord(" "))
        first = np.where(solid.any(1), solid.argmax(1), 0)
        last = np.where(solid.any(1), width - solid[:, ::-1].argmax(1), 0)
        keep = (col[None, :] >= first[:, None]) & (col[None, :] < last[:, None])
    sizes = keep.sum(1)
    return _from_bytes(chars[keep], sizes)


def _from_bytes(data: np.ndarray, sizes: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(sizes) + 1, np.int32)
    np.cumsum(sizes, out=offsets[1:])
    return pa.StringArray.from_buffers(len(sizes), pa.py_buffer(offsets),
                                       pa.py_buffer(np.ascontiguousarray(data)))


def _java_round(x: np.ndarray) -> np.ndarray:
    return np.floor(x + 0.5).astype(np.int64)


def _prices(rng: np.random.Generator, n: int) -> np.ndarray:
    """``nextPrice``: round(10^(6u) * 100), log-uniform on [100, 1e8)."""
    return _java_round(10.0 ** (rng.random(n) * 6.0) * 100.0)


class Extras:
    """``nextExtra``: a slice of one random 1 MiB string (alphabet 'H'..'z', as Java's signed
    ``'a' + nextInt() % 26`` makes it) of about ``avg - current`` bytes (0.8x..1.2x)."""

    def __init__(self, rng: np.random.Generator) -> None:
        signed = rng.integers(-(2**31), 2**31, EXTRA_POOL, dtype=np.int64)
        self.pool = (ord("a") + np.fmod(signed, 26)).astype(np.uint8)

    def draw(self, rng: np.random.Generator, current: np.ndarray, avg: int) -> pa.Array:
        d = np.maximum(avg - current, 0)
        delta = _java_round(0.2 * d)
        spread = rng.integers(0, np.maximum(2 * delta, 1))
        sizes = np.where(current > avg, 0, d - delta + np.where(delta == 0, 0, spread))
        starts = rng.integers(0, EXTRA_POOL - sizes)
        ends = np.cumsum(sizes)
        idx = np.arange(ends[-1] if len(ends) else 0) + np.repeat(starts - (ends - sizes), sizes)
        return _from_bytes(self.pool[idx], sizes)


def _next_person(rng: np.random.Generator, last_p: np.ndarray) -> np.ndarray:
    """``nextBase0PersonId``: uniform over the 1000 most recent people and the next 10."""
    nxt = last_p + 1
    active = np.minimum(nxt, ACTIVE_PEOPLE)
    return nxt - active + rng.integers(0, active + ID_LEAD)


def _next_auction(rng: np.random.Generator, last_a: np.ndarray) -> np.ndarray:
    """``nextBase0AuctionId``: uniform over the 100 most recent auctions and the next 10."""
    low = np.maximum(last_a - IN_FLIGHT_AUCTIONS, 0)
    return low + rng.integers(0, last_a - low + 1 + ID_LEAD)


def _last_person(ids: np.ndarray) -> np.ndarray:
    return ids // PROPORTION


def _last_auction(ids: np.ndarray) -> np.ndarray:
    epoch, off = ids // PROPORTION, ids % PROPORTION
    return np.where(off < 1, (epoch - 1) * 3 + 2, epoch * 3 + np.where(off >= 4, 2, off - 1))


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


# ---- the three tables ------------------------------------------------------------------------

def _person(rng: np.random.Generator, ids: np.ndarray, ts: pa.Array, extras: Extras
            ) -> pa.Table:
    n = len(ids)
    names = pa.array([f"{f} {s}" for f in FIRST_NAMES for s in LAST_NAMES])
    name = names.take(rng.integers(0, len(FIRST_NAMES), n) * len(LAST_NAMES)
                      + rng.integers(0, len(LAST_NAMES), n))
    email = _join(_strings(rng, n, 7), "@", _strings(rng, n, 5), ".com")
    digits = [pc.utf8_lpad(pa.array(rng.integers(0, 10_000, n)).cast(pa.string()), 4, "0")
              for _ in range(4)]
    card = pc.binary_join_element_wise(*digits, " ")
    city = pa.array(US_CITIES).take(rng.integers(0, len(US_CITIES), n))
    state = pa.array(US_STATES).take(rng.integers(0, len(US_STATES), n))
    size = 8 + sum(pc.binary_length(c).to_numpy() for c in (name, email, card, city, state))
    extra = extras.draw(rng, size, 200)
    pid = _last_person(ids) + FIRST_PERSON_ID
    return pa.table([pid, name, email, card, city, state, ts, extra], SCHEMAS["person"])


def _auction(rng: np.random.Generator, ids: np.ndarray, ts_ms: np.ndarray, clock: Clock,
             extras: Extras) -> pa.Table:
    n = len(ids)
    last_p = _last_person(ids)
    hot = rng.integers(0, 4, n) > 0
    seller = np.where(hot, last_p // HOT_BATCH * HOT_BATCH, _next_person(rng, last_p))
    category = FIRST_CATEGORY_ID + rng.integers(0, NUM_CATEGORIES, n)
    initial = _prices(rng, n)
    k = ids - 2
    horizon = clock.ts(k + AUCTION_LENGTH_EVENTS) - ts_ms
    expires = ts_ms + 1 + rng.integers(0, np.maximum(2 * horizon, 1))
    item = _strings(rng, n, 20)
    desc = _strings(rng, n, 100)
    reserve = initial + _prices(rng, n)
    size = 8 + pc.binary_length(item).to_numpy() + pc.binary_length(desc).to_numpy() + 40
    extra = extras.draw(rng, size, 500)
    aid = _last_auction(ids) + FIRST_AUCTION_ID
    return pa.table([aid, item, desc, initial, reserve, _times(ts_ms), _times(expires),
                     seller + FIRST_PERSON_ID, category, extra], SCHEMAS["auction"])


class Urls:
    """The hot channels' four URLs and the 10,000 other channels' (9 in 10 with a channel_id),
    built once, as the Java code does."""

    def __init__(self, rng: np.random.Generator) -> None:
        def base(n: int) -> pa.Array:
            dirs = [_strings(rng, n, 5, ord("_"), trim=False) for _ in range(3)]
            return _join("https://www.nexmark.com/", dirs[0], "/", dirs[1], "/", dirs[2],
                         "/item.htm?query=1")
        self.hot = base(len(HOT_CHANNELS))
        urls = base(CHANNELS)
        ids = np.arange(CHANNELS, dtype=np.uint32)
        rev = np.zeros(CHANNELS, np.uint32)
        for bit in range(32):  # Integer.reverse
            rev |= ((ids >> bit) & 1) << (31 - bit)
        channel_id = np.abs(rev.view(np.int32).astype(np.int64))
        channel_id[rev == 1 << 31] = -(2**31)  # Math.abs(Integer.MIN_VALUE)
        tagged = _join(urls, "&channel_id=", pa.array(channel_id).cast(pa.string()))
        self.urls = pc.if_else(pa.array(rng.integers(0, 10, CHANNELS) > 0), tagged, urls)
        self.names = pc.binary_join_element_wise(
            "channel-", pa.array(np.arange(CHANNELS)).cast(pa.string()), "")


def _bid(rng: np.random.Generator, ids: np.ndarray, ts: pa.Array, extras: Extras, urls: Urls
         ) -> pa.Table:
    n = len(ids)
    last_a, last_p = _last_auction(ids), _last_person(ids)
    hot_a = rng.integers(0, 2, n) > 0
    auction = np.where(hot_a, last_a // HOT_BATCH * HOT_BATCH, _next_auction(rng, last_a))
    hot_b = rng.integers(0, 4, n) > 0
    bidder = np.where(hot_b, last_p // HOT_BATCH * HOT_BATCH + 1, _next_person(rng, last_p))
    price = _prices(rng, n)
    hot_c = rng.integers(0, 2, n) > 0
    which_hot = rng.integers(0, len(HOT_CHANNELS), n)
    which = rng.integers(0, CHANNELS, n)
    channel = pc.if_else(pa.array(hot_c), pa.array(HOT_CHANNELS).take(which_hot),
                         urls.names.take(which))
    url = pc.if_else(pa.array(hot_c), urls.hot.take(which_hot), urls.urls.take(which))
    extra = extras.draw(rng, np.full(n, 32), 100)
    # FIRST_PERSON_ID is added twice in nexmark's BidGenerator: bidders are persons' ids + 1000
    return pa.table([auction + FIRST_AUCTION_ID, bidder + 2 * FIRST_PERSON_ID, price, channel,
                     url, ts, extra], SCHEMAS["bid"])


def _times(ms: np.ndarray) -> pa.Array:
    """TIMESTAMP(3) as the CSV has it: ``YYYY-MM-DD HH:MM:SS.fff``."""
    return pc.cast(pa.array(ms.astype("datetime64[ms]")), pa.string())


def event_ids(table: str, events: int) -> np.ndarray:
    """The ids of ``table``'s events among the first ``events`` (ids 2 .. events + 1)."""
    first, stop = 2, events + 2
    offsets = {"person": [0], "auction": [1, 2, 3], "bid": list(range(4, PROPORTION))}[table]
    epochs = np.arange(first // PROPORTION, (stop - 1) // PROPORTION + 1, dtype=np.int64)
    ids = (epochs[:, None] * PROPORTION + np.array(offsets)[None, :]).ravel()
    return ids[(ids >= first) & (ids < stop)]


def file_order(rng: np.random.Generator, ts_ms: np.ndarray, prob: float, max_delay_ms: int
               ) -> np.ndarray:
    """Rows in the order they are written: a ``prob`` share of them up to ``max_delay_ms``
    late (ties in the order the events were generated)."""
    delay = np.where(rng.random(len(ts_ms)) < prob, rng.integers(0, max_delay_ms + 1,
                                                                   len(ts_ms)), 0)
    return np.argsort(ts_ms + delay, kind="stable")


def generate(out: Path, events: int, seed: int = 1, rate: int = 1000,
             base: str = DEFAULT_BASE, delayed: float = 0.1, max_delay_s: int = 3
             ) -> dict[str, int]:
    """Write ``out``/person.csv, auction.csv, bid.csv (and q13's side_input.csv); returns the
    rows per table."""
    out.mkdir(parents=True, exist_ok=True)
    base_ms = int(datetime.fromisoformat(base).replace(tzinfo=UTC).timestamp() * 1000)
    clock = Clock(rate, base_ms)
    shared = np.random.default_rng([seed, 99])
    extras, urls = Extras(shared), Urls(shared)
    counts = {}
    for table in SCHEMAS:
        ids = event_ids(table, events)
        ts_ms = clock.ts(ids - 2)
        order = file_order(np.random.default_rng([seed, TABLE_SEED[table], 98]), ts_ms,
                           delayed, max_delay_s * 1000)
        ids, ts_ms = ids[order], ts_ms[order]
        writer = None
        try:
            for i, lo in enumerate(range(0, max(len(ids), 1), CHUNK)):
                rng = np.random.default_rng([seed, TABLE_SEED[table], i])
                part, part_ts = ids[lo:lo + CHUNK], ts_ms[lo:lo + CHUNK]
                if table == "person":
                    rows = _person(rng, part, _times(part_ts), extras)
                elif table == "auction":
                    rows = _auction(rng, part, part_ts, clock, extras)
                else:
                    rows = _bid(rng, part, _times(part_ts), extras, urls)
                if writer is None:
                    sink = pa.OSFile(str(out / f"{table}.csv"), "wb")
                    sink.write(",".join(SCHEMAS[table]).encode() + b"\n")
                    writer = pacsv.CSVWriter(sink, rows.schema, write_options=pacsv.WriteOptions(
                        include_header=False, quoting_style="none"))
                writer.write_table(rows)
        finally:
            if writer is not None:
                writer.close()
                sink.close()
        counts[table] = len(ids)
    # q13's side input, as nexmark's SideInputGenerator writes it (10,000 lines "i,i")
    keys = np.arange(SIDE_INPUT_ROWS).astype(str)
    (out / "side_input.csv").write_text("key,value\n" + "".join(
        np.char.add(np.char.add(keys, ","), np.char.add(keys, "\n"))))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=int, default=1000, help="events per second of event time")
    ap.add_argument("--base", default=DEFAULT_BASE, help="first event time (UTC)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    counts = generate(args.out, args.events, args.seed, args.rate, args.base)
    print(f"nexmark: {args.events:,} events -> {args.out} "
          f"({', '.join(f'{t} {n:,}' for t, n in counts.items())}) "
          f"in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
