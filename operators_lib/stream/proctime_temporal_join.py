"""Processing-time temporal join: ``l [LEFT] JOIN versioned FOR SYSTEM_TIME AS OF l.proctime AS
r ON l.k = r.k`` (Flink's TemporalProcessTimeJoinOperator, which Flink itself runs against
lookup tables only), as a transformWithState processor over buckets of the join keys.

Changelog rules (append-only: the left input inserts, every output row is ``+I``):
- The right side keeps one version per join key: the row that arrived last (a deduplication
  to the latest row per key, plan.Temporal.dedup: the one with the latest rowtime, the later
  arrival on a tie).
- A left row joins, when it arrives, its key's version as of the end of its micro-batch (the
  versions of its own micro-batch included: processing time does not order the rows of one
  micro-batch), at once; INNER drops it when there is none or the residual condition is not
  TRUE, LEFT pads it. A key with NULLs joins the version of the same key, NULLs included (as
  the event-time join, stream/temporal_join.py). Nothing waits, nothing is late.
- The result depends on when rows arrive: stream and batch (which joins the latest version
  of the whole input) are not compared (parity ``not_applicable``).

Runtime: grouped by bucket (a hash of the join keys), time mode None: one Python call per
bucket and micro-batch; state per bucket: one page (stream/state_view.py) with the versions as
numpy columns.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from operators_lib.plan import ROWNUM
from operators_lib.stream.event_time import TIME_MS, Block, concat, one_frame, take
from operators_lib.stream.join import SIDE
from operators_lib.stream.protocol import Processor, markers
from operators_lib.stream.rows import joint_key_codes, key_codes
from operators_lib.stream.temporal_join import TemporalJoinSpec, keep_passing, pick_rows


class ProcTimeTemporalJoinProcessor(Processor):
    """Input: the union of both sides' rows (``spec`` columns, the side, a version's rowtime
    in ``tw__t`` for a deduplicated history), grouped by bucket of the join keys."""

    name = "latest"

    def __init__(self, spec: TemporalJoinSpec):
        self.spec = spec

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        df = one_frame(rows)
        df = df[markers(df[ROWNUM].to_numpy()).data]
        side = df[SIDE].to_numpy(dtype=np.int64)
        page = self.state.load()
        versions = None if page is None else page["versions"]
        new = df[side == 1]
        if len(new):
            versions = self._latest(versions, new)
            self.state.save({"versions": versions})
        probes = df[side == 0]
        if len(probes):
            cols = (*self.spec.keys, *self.spec.left, ROWNUM)
            yield self._join({c: probes[c].to_numpy() for c in cols}, versions)

    def _latest(self, versions: Block | None, rows: pd.DataFrame) -> Block:
        """One version per key: the stored ones, then the micro-batch's rows by arrival."""
        rows = rows.sort_values(ROWNUM, kind="stable")
        keys = self.spec.keys
        cols = (*keys, *self.spec.right, TIME_MS, ROWNUM)
        both = concat(versions, {c: rows[c].to_numpy() for c in cols})
        code = key_codes(pd.DataFrame({k: both[k] for k in keys}), list(keys))
        arrival = np.arange(len(code))
        rank = (both[TIME_MS].astype(np.int64), arrival) if self.spec.dedup else (arrival,)
        order = np.lexsort((*reversed(rank), code))
        last = np.ones(len(order), bool)
        last[:-1] = code[order][1:] != code[order][:-1]
        return take(both, order[last])

    def _join(self, probes: Block, versions: Block | None) -> pd.DataFrame:
        n = len(probes[ROWNUM])
        picked = np.full(n, -1, np.int64)
        if versions is not None:
            lc, vc, _, _ = joint_key_codes(probes, versions, self.spec.keys)
            lf = pd.DataFrame({"c": lc, "i": np.arange(n)})
            m = lf.merge(pd.DataFrame({"c": vc, "j": np.arange(len(vc))}), on="c")
            picked[m["i"].to_numpy()] = m["j"].to_numpy()
            keep_passing(self.spec, probes, versions, picked)
        rows = np.arange(n) if self.spec.kind == "LEFT" else np.flatnonzero(picked >= 0)
        rows = rows[np.argsort(probes[ROWNUM][rows].astype(np.int64), kind="stable")]
        return pick_rows(self.spec, probes, rows, versions, picked[rows],
                         np.zeros(len(rows), np.int64))
