"""The operator harness (tests/harness.py) against what it stands in for.

1. Query level: for one case per kind of processor (event-time OVER with late rows, keep-first
   deduplication with its timers, GROUP BY under a TopN, a join with retractions), the harness
   and a real Structured Streaming query, fed the same micro-batches, must write the same
   changelog: the same micro-batch ids, each with the same rows. The corpus tests rely on this.
2. Operator level: rows and watermarks in, changelog out, in milliseconds, for the rules the
   processors' docstrings state (Flink's).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from operators_lib.plan import EMIT_TS, OP, ROWNUM, SEQ, AggCall, Frame
from operators_lib.stream.dedup import FirstRowProcessor
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.over import OverProcessor, OverSpec
from operators_lib.types import FlinkType
from tests.caselib import all_cases
from tests.harness import feed, rows, watermark

SAME_AS_SPARK = {"over/late_bounded_vs_unbounded": 1, "topn/dedup_keep_first": 3,
                 "topn/leaderboard_sum": 8, "join/join_retracting_view": 3}


def _batches(out) -> dict[str, Counter]:
    """The rows of each micro-batch's changelog (batches without rows left out; columns by
    name), without their places: rows of different keys emitted at one time and input row may
    come in either order."""
    dirs = sorted((out / "_state" / "changelog").glob("batch-*"))
    tables = {d.name: _naive(pq.read_table(d, coerce_int96_timestamp_unit="us")
                             .drop_columns([SEQ]).to_pandas()).astype(str) for d in dirs}
    tables = {name: t[sorted(t.columns)] for name, t in tables.items()}
    return {name: Counter(map(tuple, t.values.tolist())) for name, t in tables.items() if len(t)}


def _naive(df: pd.DataFrame) -> pd.DataFrame:
    """Timestamps as UTC wall time: Spark writes a TIMESTAMP_LTZ as INT96, read without its
    zone; the harness writes what Spark's toArrow gives, zoned UTC."""
    for c in df.columns:
        if isinstance(df[c].dtype, pd.DatetimeTZDtype):
            df[c] = df[c].dt.tz_convert("UTC").dt.tz_localize(None)
    return df


@pytest.mark.parametrize("case", [c for c in all_cases() if c.id in SAME_AS_SPARK],
                         ids=lambda c: c.id)
def test_harness_writes_the_changelog_spark_writes(spark, tmp_path, case):
    n = SAME_AS_SPARK[case.id]
    real = case.run(spark, tmp_path / "spark", "stream", rows_per_batch=n)
    sim = case.run(spark, tmp_path / "harness", "stream", rows_per_batch=n, harness=True)
    assert real.exit_code == sim.exit_code == 0
    assert sim.report.stream.micro_batches_this_run == \
        real.report.stream.micro_batches_this_run
    spark_batches = _batches(tmp_path / "spark")
    assert len(spark_batches) >= 3
    assert _batches(tmp_path / "harness") == spark_batches


# -- operator level ------------------------------------------------------------------------
_BIGINT = FlinkType("BIGINT")
_KEYS = ["k"]


def _rows(k: str, times: list[int], first_rownum: int, values: list[int] | None = None):
    return rows(first_rownum, times=times, k=k, v=values or list(range(len(times))))


def _over(preceding: int | None) -> OverProcessor:
    call = AggCall("SUM", "v", _BIGINT, "s", _BIGINT)
    schema = pa.schema([("k", pa.string()), ("s", pa.int64()), (OP, pa.string()),
                        (EMIT_TS, pa.int64()), (ROWNUM, pa.int64())])
    return OverProcessor(OverSpec(Frame("ROWS", preceding), (call,), ("k",), ("Int64",),
                                  ("k",), schema))


def _ops(frame: pd.DataFrame) -> list[tuple]:
    return [] if not len(frame) else [
        (op, int(r)) for op, r in zip(frame[OP], frame[ROWNUM])]


def test_over_emits_when_the_watermark_passes_and_drops_late_rows():
    out = feed(_over(None), _KEYS, [
        (_rows("a", [10, 30], 0, [1, 4]), 0),  # no watermark yet: both wait
        (_rows("a", [20], 2, [2]), 15),        # 10 fires; 20 is on time (> watermark 15)
        (_rows("a", [12], 3), 25),             # 20 fires; 12 <= 25 is late
        watermark(40),                         # 30 fires
    ], "EventTime")
    assert [_ops(f) for f in out] == [[], [("+I", 0)], [("+I", 2), ("LATE", 3)], [("+I", 1)]]
    fired = pd.concat([f[f[OP] == "+I"] for f in out if len(f)])
    assert fired["s"].tolist() == [1, 3, 7]  # running sums of v in time order: 1, 1+2, 1+2+4


def test_over_fires_only_after_the_watermark_advances_past_arrival():
    # Flink fires a row's timer on a watermark *advance*: a row at or behind the watermark of
    # its arrival that a bounded frame still accepts waits for the next advance.
    out = feed(_over(2), _KEYS, [(_rows("a", [50], 0), 0), watermark(60),
                                 (_rows("a", [55], 1), 60), watermark(60), watermark(61)],
               "EventTime")
    assert [_ops(f) for f in out] == [[], [("+I", 0)], [], [], [("+I", 1)]]


def test_dedup_keep_first_waits_for_the_watermark_and_emits_once():
    schema = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rank", pa.int64()),
                        (OP, pa.string()), (EMIT_TS, pa.int64()), (ROWNUM, pa.int64())])
    proc = FirstRowProcessor(("k", "v"), ("k",), "rank", False, schema)
    out = feed(proc, _KEYS, [(_rows("a", [20, 10], 0), 0), (_rows("a", [5, 30], 2), 30),
                             watermark(40)], "EventTime")
    # Row 1 (t=10) is the earliest; it fires once the watermark (30) passes it, after the
    # micro-batch's rows: t=5 is behind the watermark (late), t=30 a duplicate of a key that
    # has not fired yet but is later than the waiting row.
    assert [_ops(f) for f in out] == [[], [("LATE", 2), ("+I", 1)], []]
    assert out[1]["v"].tolist()[-1] == 1


# -- many keys in one bucket against a per-key model of the docstrings' rules ---------------
def _random_batches(rng: np.random.Generator, keys: int, batches: int):
    """Micro-batches of rows of ``keys`` keys in one bucket (times out of order, ties), each
    with the watermark in force (0: none yet), and the rows as dicts in arrival order."""
    out, dicts, rownum, wm = [], [], 0, 0
    for _ in range(batches):
        n = int(rng.integers(0, 12))
        k = rng.integers(0, keys, n)
        t = rng.integers(1, 60, n) * 10
        v = rng.integers(-5, 6, n)
        batch = [{"k": f"k{a}", "b": 0, "v": int(c), TIME_MS: int(b), ROWNUM: rownum + i}
                 for i, (a, b, c) in enumerate(zip(k, t, v))]
        rownum += n
        dicts.append(batch)
        out.append((rows(rownum - n, times=[r[TIME_MS] for r in batch],
                         k=[r["k"] for r in batch], b=0, v=[r["v"] for r in batch])
                    if batch else None, wm))
        wm = max(wm, int(rng.integers(wm, wm + 120)))
    out.append(watermark(10**6))
    dicts.append([])
    return out, dicts


def _emitted(frames) -> list[set]:
    return [set() if not len(f) else {
        (op, int(r), None if pd.isna(s) else int(s)) for op, r, s in zip(
            f[OP], f[ROWNUM], f["s"] if "s" in f else f["v"])} for f in frames]


@pytest.mark.parametrize("seed", range(6))
def test_dedup_of_many_keys_in_one_bucket_follows_the_per_key_rules(seed):
    rng = np.random.default_rng(seed)
    batches, rows = _random_batches(rng, 5, 8)
    schema = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rank", pa.int64()),
                        (OP, pa.string()), (EMIT_TS, pa.int64()), (ROWNUM, pa.int64())])
    got = _emitted(feed(FirstRowProcessor(("k", "v"), ("k",), "rank", False, schema), ["b"],
                        batches, "EventTime"))
    want, waiting, fired = [], {}, set()
    for (_, wm), batch in zip(batches, rows):
        now = wm if wm > 0 else -(2**62)
        out = set()
        for r in batch:
            if r[TIME_MS] < now:
                out.add(("LATE", r[ROWNUM], None))
            elif r["k"] not in fired:
                w = waiting.get(r["k"])
                if w is None or r[TIME_MS] < w[0][TIME_MS]:
                    waiting[r["k"]] = (r, max(r[TIME_MS], now + 1, 1))
        for key, (r, at) in list(waiting.items()):
            if at <= wm:
                out.add(("+I", r[ROWNUM], r["v"]))
                fired.add(key)
                del waiting[key]
        want.append(out)
    assert got == want


@pytest.mark.parametrize("frame", [Frame("ROWS", None), Frame("RANGE", None), Frame("ROWS", 2),
                                   Frame("RANGE", 100)], ids=str)
@pytest.mark.parametrize("seed", range(4))
def test_over_of_many_keys_in_one_bucket_follows_the_per_key_rules(frame, seed):
    rng = np.random.default_rng(seed)
    batches, rows = _random_batches(rng, 5, 8)
    call = AggCall("SUM", "v", _BIGINT, "s", _BIGINT)
    schema = pa.schema([("k", pa.string()), ("s", pa.int64()), (OP, pa.string()),
                        (EMIT_TS, pa.int64()), (ROWNUM, pa.int64())])
    over = OverProcessor(OverSpec(frame, (call,), ("k",), ("Int64",), ("k",), schema))
    got = _emitted(feed(over, ["b"], batches, "EventTime"))
    want, pending, done, last = [], [], {}, {}
    for (_, wm), batch in zip(batches, rows):
        now = wm if wm > 0 else -(2**62)
        out = set()
        # What the watermark has passed fires first (Flink: a watermark before the rows after
        # it); then the micro-batch's rows are late or wait.
        due = sorted((r for r, at in pending if at <= wm), key=lambda r: (r[TIME_MS], r[ROWNUM]))
        pending = [(r, at) for r, at in pending if at > wm]
        for r in due:  # a key's rows in time order, each after the rows fired before it
            done.setdefault(r["k"], []).append(r)
            last[r["k"]] = r[TIME_MS]
        for r in due:
            key_rows = done[r["k"]]
            if frame.kind == "ROWS":
                upto = key_rows[:key_rows.index(r) + 1]
                window = upto if frame.preceding is None else upto[-frame.preceding - 1:]
            else:
                low = -(2**62) if frame.preceding is None else r[TIME_MS] - frame.preceding
                window = [x for x in key_rows if low <= x[TIME_MS] <= r[TIME_MS]]
            out.add(("+I", r[ROWNUM], sum(x["v"] for x in window)))
        for r in batch:
            bound = now if frame.preceding is None else last.get(r["k"], -(2**62))
            if r[TIME_MS] <= bound:
                out.add(("LATE", r[ROWNUM], None))
            else:
                pending.append((r, max(r[TIME_MS], now + 1, 1)))
        want.append(out)
    assert got == want
