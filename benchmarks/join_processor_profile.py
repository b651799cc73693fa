"""How much of a stream join is twinflow's own Python (the join operator, without Spark)?

    .venv/bin/python benchmarks/join_processor_profile.py [--keys 20000] [--rows-per-key 5]

Feeds JoinProcessor (LEFT JOIN, no unique keys) one micro-batch per key — rows of both sides,
as transformWithState would hand them over — through the in-memory state handle of
processor_profile.py, and prints the time per key. The rest of a real run is Spark's
(file source, shuffle, Arrow transfer per key, state-store round trips, the sink).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from processor_profile import _Handle  # same directory: run as a script

from operators_lib.plan import OP, ROWNUM
from operators_lib.stream.join import LAYOUTS, SIDE, JoinProcessor, JoinSpec, SideSpec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=20_000)
    ap.add_argument("--rows-per-key", type=int, default=5)
    args = ap.parse_args()
    cols = ("int", "int", "float")
    spec = JoinSpec(
        "LEFT", SideSpec(("l0", "l1", "l2"), ("oid", "k", "amount"), cols, True, LAYOUTS[2], (),
                         (1,)),
        SideSpec(("r0", "r1", "r2"), ("pid", "k0", "paid"), cols, False, LAYOUTS[2], (), (1,)),
        None)
    processor, handle = JoinProcessor(spec), _Handle()
    processor.init(handle)
    rng = np.random.default_rng(1)
    n = args.rows_per_key
    side = np.arange(n) % 2
    frames = [pd.DataFrame({
        "l0": np.where(side == 0, np.arange(n), np.nan), "l1": np.where(side == 0, k, np.nan),
        "l2": np.where(side == 0, rng.random(n), np.nan),
        "r0": np.where(side == 1, np.arange(n), np.nan), "r1": np.where(side == 1, k, np.nan),
        "r2": np.where(side == 1, rng.random(n), np.nan),
        OP: "+I", ROWNUM: np.arange(n), SIDE: side}) for k in range(args.keys)]
    start, out = time.perf_counter(), 0
    for k, df in enumerate(frames):
        handle.key = k
        for o in processor.handleInputRows((False, k), iter([df]), None):  # (NULL flag, key)
            out += len(o)
    secs = time.perf_counter() - start
    print(f"{args.keys:,} keys x {n} rows: {secs:.2f} s, {secs / args.keys * 1000:.2f} ms per "
          f"key, {args.keys * n / secs:,.0f} input rows/s, {out:,} output rows")


if __name__ == "__main__":
    main()
