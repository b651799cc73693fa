"""The state view (stream/state_view.py): every operator's page reads back as it was written,
a page of another operator or version is refused by name, the operators' versions make the
state layout, and the processors share one protocol and one reading of marker rows
(stream/protocol.py)."""

from __future__ import annotations

import datetime as dt
import pickle
import re
from collections import Counter
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql.streaming.tws_tester import _InMemoryStatefulProcessorHandle

import operators_lib.stream.planner  # noqa: F401  (every processor)
from operators_lib.errors import StateError
from operators_lib.plan import END_FIRST, SWEEP_FIRST, AggCall, SortKey
from operators_lib.stream.group_agg import AggSpec, GroupAggProcessor
from operators_lib.stream.layout import STATE_LAYOUT, state_layout
from operators_lib.stream.protocol import Processor, markers
from operators_lib.stream.state_view import VERSIONS, StateView
from operators_lib.stream.topn import TopNProcessor, TopNSpec
from operators_lib.types import FlinkType

BIGINT, STRING, DOUBLE = FlinkType("BIGINT"), FlinkType("STRING"), FlinkType("DOUBLE")
DECIMAL = FlinkType("DECIMAL", 10, 2)


def _same(a, b) -> bool:
    """Equal, and of the same types and dtypes (NaN equal to NaN)."""
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, pa.Table):
        return a.equals(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


def _objects(*values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


_KEYS = {"tw__kn0": np.array([False, True]), "tw__kv0": _objects("a", "")}
_ROWS = pa.table({"v": pa.array([1, None], pa.int64()), "s": ["x", None],
                  "tw__t": pa.array([3, 4], pa.int64())})
_BLOCK = {"k0": _objects("a", None), "d": _objects(Decimal("1.50"), None),
          "day": _objects(dt.date(2024, 1, 2), None), "b": _objects(True, None),
          "list": _objects(np.array([1, 2]), None), "f": np.array([1.5, np.nan]),
          "tw__t": np.array([10, 20]), "tw__matched": np.array([True, False])}
# Each operator's page as its processor keeps it (the parts its _load returns).
PAGES = {
    "over": {"keys": _KEYS, "last": np.array([5, -(2**62)]), "counts": [np.array([1, 0])],
             "accs": [_objects(Decimal("1.50"), None), np.array([1.5, np.nan])],
             "pending": _ROWS, "history": None, "timer": 4},
    "dedup_first": {"keys": _KEYS, "fired": np.array([True, False]), "waiting": _ROWS,
                    "timer": None},
    "join": {"sides": [_ROWS.append_column("tw__written", pa.array([7, 8], pa.int64())), None]},
    "interval": {"rows": [_BLOCK, None], "timer": 31},
    "temporal": {"left": None, "versions": _BLOCK, "timer": 11},
    "windows": {"pairs": _BLOCK, "fired": {"k0": _objects("a"), "tw__we": np.array([9])},
                "timer": 8},
    "latest": {"versions": _BLOCK},
}


def _arrays(part) -> list[np.ndarray]:
    if isinstance(part, dict | list):
        return [a for p in (part.values() if isinstance(part, dict) else part)
                for a in _arrays(p)]
    return [part] if isinstance(part, np.ndarray) else []


@pytest.mark.parametrize("operator", sorted(PAGES))
def test_a_bucket_page_reads_back_as_written(operator):
    view = StateView(operator)
    page = PAGES[operator]
    back = view.loads(view.dumps(page))
    assert _same(page, back)
    assert all(a.flags.writeable for a in _arrays(back))  # processors update them in place


def _slot_round_trip(processor, page: dict) -> dict:
    """``page`` ({key: value}) written to a slot page and read back, as SlotState does."""
    handle = _InMemoryStatefulProcessorHandle("None")
    handle.setGroupingKey((0,))
    processor.init(handle)
    state = processor.state
    state.open_bucket()
    state.put(7, {k: state.dump(v) for k, v in page.items()})
    state.open_bucket()
    return {k: state.load(row) for k, row in state.get(7).items()}


def _aggs() -> tuple[AggCall, ...]:
    return (AggCall("COUNT", None, None, "n", BIGINT),
            AggCall("SUM", "a", BIGINT, "s", BIGINT),
            AggCall("AVG", "d", DECIMAL, "avg", DECIMAL),
            AggCall("MIN", "t", STRING, "lo", STRING),
            AggCall("COUNT", "a", BIGINT, "nd", BIGINT, distinct=True),
            AggCall("LISTAGG", "t", STRING, "all", STRING),
            AggCall("M2", "x", DOUBLE, "m2", DOUBLE))


def test_a_group_by_slot_page_reads_back_as_written():
    aggs = _aggs()
    kinds = ("", "int", "other", "other", "int", "other", "float")
    proc = GroupAggProcessor(AggSpec(("g0",), ("int",), aggs, kinds,
                                     tuple(a.name for a in aggs), ttl_ms=1000), ["k0", "k1"])
    page = {(False, 1): [3, [3, [7, 2], [Decimal("1.50"), 1], Counter({"b": 2, "a": 1}),
                             Counter({5: 1}), ["x", "y"], [2, 1.5, 0.5]], 1000, 4],
            (True, 0): [1, [1, [0, 0], [0, 0], Counter(), Counter(), [], [0, 0.0, 0.0]],
                        None, 0]}
    back = _slot_round_trip(proc, page)
    assert list(back) == list(page)
    for k, st in page.items():
        assert back[k] == st
        # the order of a Counter (first seen first) is kept
        assert [list(a) for a in back[k][1] if isinstance(a, Counter)] == \
            [list(a) for a in st[1] if isinstance(a, Counter)]


def test_an_integer_sum_past_bigint_reads_back_with_the_same_result():
    call = AggCall("SUM", "a", BIGINT, "s", BIGINT)
    proc = GroupAggProcessor(AggSpec(("g0",), ("int",), (call,), ("int",), ("s",)),
                             ["k0", "k1"])
    st = [2, [[2**63 + 5, 2]], None, 1]
    back = _slot_round_trip(proc, {(False, 1): st})[(False, 1)]
    assert proc._row((1,), back) == proc._row((1,), st) == (1, -(2**63) + 5)


def test_a_topn_slot_page_reads_back_as_written():
    spec = TopNSpec(("name", "score"), ("other", "int"),
                    (SortKey("name", True, False), SortKey("score", False, True)),
                    "ROW_NUMBER", 1, 3, True, retracting=True)
    proc = TopNProcessor(spec, ["k0", "k1"], "rk")
    rows = [("b", 2), ("a", None), ("a", 1)]
    entries = sorted((proc._key(r, n), r) for n, r in enumerate(rows))
    assert _slot_round_trip(proc, {(False, "p"): entries}) == {(False, "p"): entries}


def _versions_in(message: str) -> list[str]:
    return re.findall(r"(\w+) version (\S+?)[;,)]? ", message + " ")


def test_a_page_of_another_version_is_refused_by_name(monkeypatch):
    written = VERSIONS["over"]
    blob = StateView("over").dumps(PAGES["over"])
    monkeypatch.setitem(VERSIONS, "over", written + 1)
    with pytest.raises(StateError) as e:
        StateView("over").loads(blob)
    assert _versions_in(str(e.value)) == [("over", str(written)), ("over", str(written + 1))]
    rows = StateView("topn").dumps_rows({"tw__key0": [1]}, {})
    monkeypatch.setitem(VERSIONS, "topn", VERSIONS["topn"] + 1)
    with pytest.raises(StateError, match="the topn operator's state holds a page of topn"):
        StateView("topn").loads_rows(rows)


def test_a_page_of_another_operator_or_encoding_is_refused():
    with pytest.raises(StateError, match="holds a page of over version"):
        StateView("dedup_first").loads(StateView("over").dumps(PAGES["over"]))
    # what twinflow wrote before typed pages
    with pytest.raises(StateError, match="an earlier encoding"):
        StateView("join").loads(pickle.dumps({"version": 1, "sides": [None, None]}))


def test_the_state_layout_names_every_operators_version():
    assert STATE_LAYOUT == state_layout(VERSIONS)
    for name, version in VERSIONS.items():
        assert f"{name}/{version}" in STATE_LAYOUT
        assert state_layout({**VERSIONS, name: version + 1}) != STATE_LAYOUT


def _processors(cls: type) -> set[type]:
    subs = set(cls.__subclasses__())
    return subs.union(*(_processors(s) for s in subs))


def test_every_processor_keeps_pages_of_a_versioned_operator():
    names = {p.name for p in _processors(Processor) if "name" in vars(p)}
    assert names == set(VERSIONS)


def test_marker_rows_are_told_from_data_in_one_place():
    rownum = np.array([0, 1, -1, SWEEP_FIRST - 3, SWEEP_FIRST, 5])
    op = _objects("+I", "LATE", None, None, None, "-U")
    kinds = markers(rownum, op)
    assert kinds.data.tolist() == [True, False, False, False, False, True]
    assert kinds.passed.tolist() == [False, True, False, False, False, False]
    assert kinds.sweep == SWEEP_FIRST - 3 and not kinds.ended
    # without tw__op (an append-only input) no row is an upstream marker
    assert markers(rownum).data.tolist() == [True, True, False, False, False, True]
    assert markers(np.array([END_FIRST - 4, 3])).ended
