"""A state sweep (``twinflow state compact``, stream/rows.py) through the changelog operators
themselves, in memory: rows in at a TTL clock, a sweep later, the TTL markers and what stays
in state out. (tests/test_compaction.py runs it on Spark.)"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
from pyspark.sql.streaming.tws_tester import TwsTester

from operators_lib.plan import OP, ROWNUM, SWEEP, SWEEP_FIRST, TTL, AggCall
from operators_lib.stream import packing
from operators_lib.stream.group_agg import AggSpec, GroupAggProcessor
from operators_lib.stream.join import LAYOUTS, SIDE, JoinProcessor, JoinSpec, SideSpec
from operators_lib.stream.rows import KEY
from operators_lib.stream.state_view import StateView
from operators_lib.types import FlinkType
from tests.harness import insert, key_columns, sweep

TTL_MS = 5_000
KEYS = key_columns(1)
BIGINT = FlinkType("BIGINT")


def _rows(groups: list[int], now: int, first: int = 0, **cols) -> pd.DataFrame:
    return insert(first, key=groups, slot=[g % 7 for g in groups], now=now, **cols)


def _keys(tester: TwsTester, name: str) -> set:
    pages = [StateView(name).loads_rows(blob) for (blob,) in tester.peekMapState(name, 0).values()]
    return {k for t in pages for k in zip(*(t.column(c).to_pylist() for c in t.column_names
                                             if c.startswith(KEY)))}


def test_sweep_drops_idle_groups_and_reports_them():
    spec = AggSpec(("g0",), ("int",), (AggCall("COUNT", None, None, "n", BIGINT),), ("",),
                   ("o0",), TTL_MS)
    tester = TwsTester(GroupAggProcessor(spec, KEYS))
    tester.testInPandas(0, _rows([1, 2, 3], 1_000, g0=[1, 2, 3]))
    tester.testInPandas(0, _rows([3], 4_000, first=3, g0=[3]))
    assert _keys(tester, "group") == {(False, 1), (False, 2), (False, 3)}
    out = tester.testInPandas(0, sweep(8_000, g0=None))
    # Groups 1 and 2 were written at 1 s, idle 7 s > 5 s; group 3 was written at 4 s.
    ttl = out[out[OP] == TTL]
    assert sorted(ttl["g0"]) == [1, 2]
    assert ttl["o0"].isna().all()
    passed = out[out[OP] == SWEEP]  # passed on, once, to the operator downstream
    assert passed[ROWNUM].tolist() == [SWEEP_FIRST]
    assert len(out) == 3  # nothing else: results emitted earlier stay
    assert _keys(tester, "group") == {(False, 3)}
    # The group that started afresh counts from 1, as after an expiry on touch.
    again = tester.testInPandas(0, _rows([1], 8_500, first=4, g0=[1]))
    assert again[again[OP] == "+I"]["o0"].tolist() == [1]


def test_sweep_without_ttl_passes_on_and_keeps_everything():
    spec = AggSpec(("g0",), ("int",), (AggCall("COUNT", None, None, "n", BIGINT),), ("",),
                   ("o0",))
    tester = TwsTester(GroupAggProcessor(spec, KEYS))
    tester.testInPandas(0, _rows([1, 2], 1_000, g0=[1, 2]))
    out = tester.testInPandas(0, sweep(10**9, g0=None))
    assert out[OP].tolist() == [SWEEP]
    assert _keys(tester, "group") == {(False, 1), (False, 2)}


def _packed(tester: TwsTester, frame: pd.DataFrame) -> pd.DataFrame:
    """An Arrow processor's call: its rows packed in, its output unpacked (stream/packing.py)."""
    out = tester.testInPandas(0, packing.frame(pa.Table.from_pandas(frame, preserve_index=False)))
    return packing.unpack(out) if len(out) else out


def test_sweep_expires_join_records_side_by_side():
    """A join key keeps its records written within the TTL; one whose records all expired is
    dropped; each key that lost records is reported once."""
    side = SideSpec(("l0",), ("v",), False, LAYOUTS[2], (), ())
    spec = JoinSpec("INNER", side, SideSpec(("r0",), ("w",), False, LAYOUTS[2], (), ()), None,
                    TTL_MS)
    tester = TwsTester(JoinProcessor(spec, KEYS))
    ints = pd.Series([None, None], dtype="Int64")
    _packed(tester, _rows([1, 2], 1_000, l0=[10, 20], r0=ints, side=[0, 0]))
    _packed(tester, _rows([2], 5_500, first=2, l0=ints[:1], r0=[7], side=[1]))
    marker = sweep(8_000, l0=None, r0=None)
    marker["l0"], marker["r0"], marker[SIDE] = ints[:1], ints[:1], 0  # typed, as in a run
    out = _packed(tester, marker)
    ttl = out[out[OP] == TTL]
    assert len(ttl) == 2  # key 1 (its only record) and key 2 (its left record)
    passed = out[out[OP] == SWEEP]
    assert passed[ROWNUM].tolist() == [SWEEP_FIRST]
    page = StateView("join").loads(tester.peekValueState("join", 0)[0])
    left, right = page["sides"]
    assert left is None and right.column("r0").to_pylist() == [7]
    assert right.column(KEYS[1]).to_pylist() == [2]
