"""Processors on large micro-batches, where the TopN skips rows by a threshold and a bucket's
rows are grouped in numpy (paths that one-row micro-batches never take), through pyspark's
TwsTester. The TopN's changelog must be the one the same rows give one micro-batch each (the
record-by-record path that matches Flink's changelog in tests/test_topn_cases.py), and its final
top N a plain sort of the input (ties by arrival); GROUP BY's result the plain aggregates."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest
from pyspark.sql.streaming.tws_tester import TwsTester

from operators_lib.plan import OP, ROWNUM, SortKey
from operators_lib.stream.topn import TopNProcessor, TopNSpec
from tests.changelogs import materialize
from tests.harness import changes, end_of_input, insert, key_columns

KEYS = key_columns(1)


def _input(rows: int, partitions: int, seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    part = [rng.randrange(partitions) for _ in range(rows)]
    return insert(key=part, slot=[p * 7 for p in part], c0=[f"shop-{i}" for i in range(rows)],
                  c1=[None if rng.random() < 0.05 else float(rng.randrange(200))
                      for _ in range(rows)])


def _run(spec: TopNSpec, frames: list[pd.DataFrame]) -> list[tuple]:
    tester = TwsTester(TopNProcessor(spec, KEYS, "rank"))
    out = [tester.testInPandas(0, f) for f in frames]
    out = pd.concat([o for o in out if len(o)], ignore_index=True)
    return [tuple(r) for r in out[[OP, "c0", "c1", "rank"]].itertuples(index=False)]


@pytest.mark.parametrize(("desc", "nulls_first", "end", "rank_output"), [
    (True, False, 10, True), (True, False, 10, False), (False, True, 5, True),
    (False, False, 1, False)])
def test_large_micro_batch_equals_record_by_record(desc, nulls_first, end, rank_output):
    df = _input(6000, 3, seed=end)
    spec = TopNSpec(("c0", "c1"), ("other", "float"), (SortKey("c1", desc, nulls_first),),
                    "ROW_NUMBER", 1, end, rank_output, False)
    whole = _run(spec, [df])
    one_by_one = _run(spec, [df.iloc[[i]] for i in range(len(df))])
    # per partition (one micro-batch emits partition after partition)
    part = dict(zip(df["c0"], df[KEYS[1]]))
    for p in range(3):
        assert [r for r in whole if part[r[1]] == p] == [r for r in one_by_one
                                                         if part[r[1]] == p]
    final = materialize(pd.DataFrame(whole, columns=[OP, "c0", "c1", "rank"]), OP,
                        ["c0", "c1"])
    expected = []
    for _, g in df.groupby(KEYS[1]):
        nulls = g["c1"].isna()
        score = -g["c1"] if desc else g["c1"]
        score = score.where(~nulls, -np.inf if nulls_first else np.inf)
        top = g.assign(s=score).sort_values(["s", ROWNUM], kind="stable").head(end)
        expected += [(a, None if b != b else b) for a, b in zip(top["c0"], top["c1"])]
    got = [(a, None if b != b else b) for a, b in zip(final["c0"], final["c1"])]
    assert sorted(got, key=str) == sorted(expected, key=str)


def test_large_bucket_with_retractions_groups_like_small_ones():
    """GROUP BY fed a bucket of 6,000 rows (numpy grouping) whose second micro-batch retracts
    half of the first: the result is the plain count and sum of what remains."""
    from operators_lib.plan import AggCall
    from operators_lib.stream.group_agg import AggSpec, GroupAggProcessor
    from operators_lib.types import FlinkType

    bigint = FlinkType("BIGINT")
    spec = AggSpec(("g0",), ("int",), (AggCall("COUNT", None, None, "n", bigint),
                                       AggCall("SUM", "a0", bigint, "s", bigint)),
                   ("", "int"), ("o0", "o1"))
    tester = TwsTester(GroupAggProcessor(spec, KEYS))
    rng = random.Random(3)
    rows = [(rng.randrange(40), rng.randrange(100)) for _ in range(6000)]

    def frame(ops: list[str], part: list[tuple], first: int) -> pd.DataFrame:
        groups = [g for g, _ in part]
        return changes(ops, first, key=groups, slot=groups, g0=groups, a0=[v for _, v in part])

    gone, new = rows[::2], [(rng.randrange(40), rng.randrange(100)) for _ in range(3000)]
    out = [tester.testInPandas(0, frame(["+I"] * 6000, rows, 0)),
           tester.testInPandas(0, frame(["-D"] * 3000 + ["+I"] * 3000, gone + new, 6000))]
    changelog = pd.concat(out, ignore_index=True)
    final = materialize(changelog, OP, ["o0", "o1", "g0"])
    kept = rows[1::2] + new
    expected = {g: (sum(1 for k, _ in kept if k == g), sum(v for k, v in kept if k == g))
                for g in {k for k, _ in kept}}
    assert {int(g): (int(n), int(s)) for g, n, s in
            zip(final["g0"], final["o0"], final["o1"])} == expected
    assert len(final) == len(expected)


def test_batch_prefilter_keeps_what_can_rank():
    """keep_batch_top (before the TopN's shuffle) keeps, per partition, the rows that rank
    within N among the batch's rows, in input order, and the end-of-input marker: the TopN's
    final result over them is the one over every row."""
    import pyarrow as pa

    from operators_lib.stream.topn import keep_batch_top

    marker = end_of_input(c0=None, c1=np.nan)
    df = pd.concat([_input(6000, 3, seed=9), marker], ignore_index=True)
    key = SortKey("c1", True, False)
    batches = [pa.RecordBatch.from_pandas(df.iloc[i:i + 2500], preserve_index=False)
               for i in range(0, len(df), 2500)]
    kept = pa.Table.from_batches(list(keep_batch_top(iter(batches), [KEYS[1]], [key], 10)))
    kept = kept.to_pandas()
    assert len(kept) <= 3 * 10 * len(batches) + 1 and (kept[ROWNUM] == -1).sum() == 1
    assert list(kept[ROWNUM]) == sorted(kept[ROWNUM], key=lambda r: (r < 0, r))
    spec = TopNSpec(("c0", "c1"), ("other", "float"), (key,), "ROW_NUMBER", 1, 10, False, False)

    def final(frame: pd.DataFrame) -> list:
        rows = materialize(pd.DataFrame(_run(spec, [frame]), columns=[OP, "c0", "c1", "rank"]),
                           OP, ["c0", "c1"])
        return sorted(rows["c0"])

    assert final(kept[kept[ROWNUM] >= 0]) == final(df[df[ROWNUM] >= 0])


def test_stream_with_batch_prefilter_in_parity(spark, tmp_path):
    """A real stream of 3,000 rows in micro-batches of 1,500 (the TopN pre-filter runs before
    the shuffle): parity with batch, and the top 3 per category of a plain sort."""
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec

    rng = random.Random(5)
    rows = [(f"s{i}", f"c{rng.randrange(4)}", rng.randrange(500)) for i in range(3000)]
    (tmp_path / "t.csv").write_text("shop,cat,sales\n" + "".join(
        f"{s},{c},{v}\n" for s, c, v in rows))
    (tmp_path / "ddl.sql").write_text("CREATE TABLE t (shop STRING, cat STRING, sales INT)")
    (tmp_path / "q.sql").write_text(
        "SELECT cat, shop, sales, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY cat "
        "ORDER BY sales DESC) AS rn FROM t) WHERE rn <= 3")
    out = tmp_path / "out"
    result = run(RunSpec.bounded_run([tmp_path / "ddl.sql", tmp_path / "q.sql"],
                                     {"t": tmp_path / "t.csv"}, "both", out, 1500), spark)
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "equal"
    assert result.report.stream.micro_batches_this_run >= 2
    expected = set()
    for cat in {c for _, c, _ in rows}:
        ranked = sorted([r for r in rows if r[1] == cat], key=lambda r: -r[2])[:3]
        expected |= {f"{cat},{s},{v},{n}" for n, (s, _, v) in enumerate(ranked, 1)}
    assert set((out / "stream.csv").read_text().splitlines()[1:]) == expected
