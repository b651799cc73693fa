"""How much of a stream window run is twinflow's own Python (the window processor, no Spark)?

    .venv/bin/python benchmarks/window_profile.py [--rows 1000000] [--users 1000] [--profile]

Feeds the rows of windows_bench.py (its CSV, generated if missing) to WindowAggProcessor
through an in-memory state handle, as the real run does with ``--rows-per-batch <rows>``: one
micro-batch of 1,024 buckets (rows added to the pending windows), then the end-of-input
watermark, whose timers fire every window. Prints both phases per query; ``--profile`` adds
the functions that dominate (cProfile). The rest of a real run's time is Spark's.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processor_profile import MemoryHandle, _Timer  # noqa: E402
from windows_bench import generate  # noqa: E402

from operators_lib.plan import ROWNUM, AggCall, TimeWindow  # noqa: E402
from operators_lib.stream.event_time import TIME_MS  # noqa: E402
from operators_lib.stream.rows import BUCKETS  # noqa: E402
from operators_lib.stream.window_agg import WindowAggProcessor, WindowAggSpec  # noqa: E402
from operators_lib.types import FlinkType  # noqa: E402

WINDOWS = {"TUMBLE 1 min": TimeWindow("TUMBLE", 60_000, 60_000),
           "HOP 10 s / 1 min": TimeWindow("HOP", 60_000, 10_000),
           "SESSION 30 s": TimeWindow("SESSION", 30_000, 30_000)}


class _Expired:
    def getExpiryTimeInMs(self) -> int:  # noqa: N802 - Spark's API name
        return 0


def run(window: TimeWindow, groups: dict, wm: int) -> tuple[float, float, int]:
    """(seconds adding the micro-batch, seconds firing at end of input, rows emitted)."""
    count = AggCall("COUNT", None, None, "o0", FlinkType("BIGINT"))
    spec = WindowAggSpec(window, ("g0",), ("int",), (count,), ("Int64",),
                         ("tw__wstart", "tw__wend", "tw__wtime"))
    handle, proc = MemoryHandle(), WindowAggProcessor(spec)
    proc.init(handle)
    emitted = 0
    t0 = time.perf_counter()
    for bucket, rows in groups.items():
        handle.key = bucket
        emitted += sum(len(o) for o in proc.handleInputRows((bucket,), iter([rows]),
                                                            _Timer(wm)))
    t1 = time.perf_counter()
    for bucket in list(handle.values):
        handle.key = bucket
        emitted += sum(len(o) for o in proc.handleExpiredTimer((bucket,), _Timer(2**62),
                                                               _Expired()))
    return t1 - t0, time.perf_counter() - t1, emitted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    csv, _ = generate(args.rows, args.users)
    data = pd.read_csv(csv)
    t_ms = pd.to_datetime(data["ts"]).to_numpy().astype("datetime64[ms]").astype(np.int64)
    rows = pd.DataFrame({"g0": data["user_id"].astype(np.int64), TIME_MS: t_ms,
                         ROWNUM: np.arange(len(data), dtype=np.int64)})
    groups = dict(tuple(rows.groupby(rows["g0"] % BUCKETS)))
    for name, window in WINDOWS.items():
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        add, fire, emitted = run(window, {b: g.reset_index(drop=True)
                                          for b, g in groups.items()}, -1)
        if profiler:
            profiler.disable()
        print(f"{name:18s} add {add:5.2f} s  fire {fire:5.2f} s  = "
              f"{args.rows / (add + fire):,.0f} rows/s ({emitted:,} window rows)", flush=True)
        if profiler:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(18)


if __name__ == "__main__":
    main()
