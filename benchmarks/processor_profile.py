"""How much of a stream OVER run is twinflow's own Python (the processor, without Spark)?

    .venv/bin/python benchmarks/processor_profile.py [--rows 1000000] [--partitions 1000]

Feeds the same rows as over_bench.py to OverProcessor through an in-memory state handle, in
1 or 10 micro-batches, grouped by bucket of keys as the stream groups them; the rest of a real
run's time is Spark (file source, shuffle, Arrow transfer, the state-store round trips of
transformWithState, the sink).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
import pyarrow as pa

from operators_lib.plan import EMIT_TS, OP, ROWNUM, AggCall, Frame
from operators_lib.stream import packing
from operators_lib.stream.event_time import TIME_MS
from operators_lib.stream.over import OverProcessor, OverSpec
from operators_lib.stream.rows import BUCKETS
from operators_lib.types import FlinkType


class _Timer:
    def __init__(self, wm: int):
        self.wm = wm

    def getCurrentWatermarkInMs(self) -> int:  # noqa: N802 - Spark's API name
        return self.wm


class MemoryHandle:
    """In-memory ValueState + timers: what transformWithState provides, minus the JVM."""

    def __init__(self):
        self.values: dict = {}
        self.key = None

    def getValueState(self, name, schema):  # noqa: N802
        handle = self

        class _State:
            def get(self):
                return handle.values.get(handle.key)

            def update(self, value):
                handle.values[handle.key] = value

            def clear(self):
                handle.values.pop(handle.key, None)

        return _State()

    def registerTimer(self, ts):  # noqa: N802
        pass

    def deleteTimer(self, ts):  # noqa: N802
        pass


SCHEMA = pa.schema([("k", pa.int32()), ("v", pa.float64()), ("ts", pa.timestamp("ns")),
                    ("tw__o0", pa.float64()), (OP, pa.string()), (EMIT_TS, pa.int64()),
                    (ROWNUM, pa.int64())])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=1000)
    args = ap.parse_args()
    n, p = args.rows, args.partitions
    t_ms = 1_704_067_200_000 + np.arange(n) * 10
    data = pd.DataFrame({"k": (np.arange(n) % p).astype(np.int32), "v": np.random.rand(n),
                         "ts": pd.to_datetime(t_ms, unit="ms"), ROWNUM: np.arange(n),
                         TIME_MS: t_ms})
    data["tw__a0"] = data["v"]
    call = AggCall("MAX", "tw__a0", FlinkType("DOUBLE"), "tw__o0", FlinkType("DOUBLE"))
    for frame in (Frame("ROWS", 2), Frame("RANGE", 120_000)):
        for batches in (1, 10):
            handle = MemoryHandle()
            proc = OverProcessor(OverSpec(frame, (call,), ("k", "v", "ts"), ("float64",),
                                          ("k",), SCHEMA))
            proc.init(handle)
            size = n // batches
            start, wm, emitted = time.perf_counter(), -1, 0
            # As the stream hands them over: each bucket's rows packed as Arrow.
            groups_per_batch = [
                {k: packing.frame(pa.Table.from_pandas(g, preserve_index=False))
                 for k, g in data.iloc[b * size:(b + 1) * size].groupby(data["k"] % BUCKETS)}
                for b in range(batches)]
            prep = time.perf_counter() - start
            start = time.perf_counter()
            for b, groups in enumerate(groups_per_batch):
                for k, g in groups.items():
                    handle.key = k
                    emitted += sum(len(packing.unpack(o)) for o in proc.handleInputRows(
                        (k,), iter([g]), _Timer(wm)))
                wm = int(data[TIME_MS].iloc[(b + 1) * size - 1])
            for k in handle.values:  # end of input: the final watermark fires the rest
                handle.key = k
                emitted += sum(len(packing.unpack(o)) for o in proc.handleExpiredTimer(
                    (k,), _Timer(2**62), type("I", (), {"getExpiryTimeInMs": lambda s: 0})()))
            secs = time.perf_counter() - start
            assert emitted == n, emitted
            print(f"{frame.kind:5s} {batches:2d} micro-batch(es): processor {secs:6.2f}s "
                  f"= {n / secs:,.0f} rows/s (grouping input in pandas: {prep:.1f}s, not counted)")


if __name__ == "__main__":
    main()
