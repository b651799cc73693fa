"""How much of a stream join is twinflow's own Python (the join operator, without Spark)?

    .venv/bin/python benchmarks/join_processor_profile.py [--keys 20000] [--rows-per-key 5]
        [--touch 0.2]

Feeds JoinProcessor (LEFT JOIN, no unique keys) one micro-batch: rows of both sides packed by
bucket, as transformWithState hands them over, with an in-memory page per bucket, and prints
the time per join key. ``--touch F``: then a second micro-batch gives a share F of the keys one
new right row each: its time against the stored rows shows what the state's size costs a
micro-batch that touches only some keys (a bucket's page is read and written whole).
The rest of a real run is Spark's (file source, shuffle, Arrow transfer per bucket,
state-store round trips, the sink).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import pyarrow as pa
from processor_profile import MemoryHandle  # the in-memory state of the OVER profile

from operators_lib.plan import OP, ROWNUM
from operators_lib.stream import packing
from operators_lib.stream.join import LAYOUTS, SIDE, JoinProcessor, JoinSpec, SideSpec
from operators_lib.stream.rows import BUCKETS, SLOT, SLOTS


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=20_000)
    ap.add_argument("--rows-per-key", type=int, default=5)
    ap.add_argument("--touch", type=float, default=0.0)
    args = ap.parse_args()
    spec = JoinSpec(
        "LEFT", SideSpec(("l0", "l1", "l2"), ("oid", "k", "amount"), True, LAYOUTS[2], (), (1,)),
        SideSpec(("r0", "r1", "r2"), ("pid", "k0", "paid"), False, LAYOUTS[2], (), (1,)),
        None)
    processor = JoinProcessor(spec, ["tw__kn0", "tw__kv0"])
    handle = MemoryHandle()
    processor.init(handle)
    rng = np.random.default_rng(1)
    n = args.keys * args.rows_per_key
    k = np.arange(n) % args.keys
    side = (np.arange(n) // args.keys) % 2
    df = pd.DataFrame({
        "l0": np.where(side == 0, np.arange(n), np.nan), "l1": np.where(side == 0, k, np.nan),
        "l2": np.where(side == 0, rng.random(n), np.nan),
        "r0": np.where(side == 1, np.arange(n), np.nan), "r1": np.where(side == 1, k, np.nan),
        "r2": np.where(side == 1, rng.random(n), np.nan),
        OP: "+I", ROWNUM: np.arange(n), SIDE: side, "tw__kn0": False, "tw__kv0": k,
        SLOT: k % SLOTS})
    secs, out, buckets = _micro_batch(processor, handle, df)
    print(f"{args.keys:,} keys x {args.rows_per_key} rows in {buckets} buckets: "
          f"{secs:.2f} s, {secs / args.keys * 1000:.3f} ms per key, {n / secs:,.0f} input "
          f"rows/s, {out:,} output rows")
    if args.touch:
        keys = np.sort(rng.choice(args.keys, int(args.keys * args.touch), replace=False))
        m = len(keys)
        df = pd.DataFrame({
            "l0": np.nan, "l1": np.nan, "l2": np.nan, "r0": (n + np.arange(m)).astype(float),
            "r1": keys.astype(float),
            "r2": rng.random(m), OP: "+I", ROWNUM: n + np.arange(m), SIDE: 1,
            "tw__kn0": False, "tw__kv0": keys, SLOT: keys % SLOTS})
        secs, out, _ = _micro_batch(processor, handle, df)
        print(f"then {m:,} keys touched ({args.touch:.0%}), one new row each, against {n:,} "
              f"stored rows: {secs:.2f} s, {out:,} output rows")


def _micro_batch(processor: JoinProcessor, handle: MemoryHandle, df: pd.DataFrame
                 ) -> tuple[float, int, int]:
    """One micro-batch through the processor, bucket by bucket, packed as a stream packs it:
    (seconds, output rows, buckets)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    bucket = df[SLOT].to_numpy() % BUCKETS
    buckets = {int(b): packing.frame(table.filter(pa.array(bucket == b)))
               for b in np.unique(bucket)}
    start, out = time.perf_counter(), 0
    for b, frame in buckets.items():
        handle.key = b
        for o in processor.handleInputRows((b,), iter([frame]), None):
            out += len(packing.unpack(o))
    return time.perf_counter() - start, out, len(buckets)


if __name__ == "__main__":
    main()
