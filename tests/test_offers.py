"""The offer log (io/offers.py): Spark's file source admits exactly the offered files, in
their order, whatever the files' modification times say."""

from __future__ import annotations

import os
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from operators_lib.catalog import Column, TableDef
from operators_lib.io import offers
from operators_lib.plan import ROWNUM
from operators_lib.state import lifecycle
from operators_lib.stream.runner import SPARK
from operators_lib.types import FlinkType

TABLE = TableDef("t", (Column("x", FlinkType("BIGINT")),))


def _part(source, k: int, stamp: float):
    path = source / f"part-{k:06d}.parquet"
    pq.write_table(pa.table({"x": [k, k], ROWNUM: [2 * k, 2 * k + 1]}), path)
    os.utime(path, (stamp, stamp))
    return path


def _stream(spark, source, checkpoint) -> list[list[int]]:
    """Run the table's stream to the end of what was offered: the x values of each
    micro-batch."""
    seen, lock = [], threading.Lock()

    def sink(df, _):
        with lock:
            seen.append(sorted({r.x for r in df.collect()}))
    (SPARK.source(spark, TABLE, source).writeStream.foreachBatch(sink)
     .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
     .awaitTermination())
    return seen


def test_the_stream_admits_offered_files_in_offer_order(spark, tmp_path):
    state = tmp_path / "my state"  # a space: the log names files by URI
    source = state / "staged" / "t"
    source.mkdir(parents=True)
    # Modification times against the order (later parts older), and ties: the log decides.
    parts = [_part(source, k, 1_000_000 - 10 * (k // 3)) for k in range(7)]
    lifecycle.offer(state, "t", parts[:4])
    assert offers.offered(source) == parts[:4] and not offers.ended(source)
    # Parts 4..6 exist but are not offered (a failed run's unstaged files): not read.
    assert _stream(spark, source, tmp_path / "ck") == [[0], [1], [2], [3]]
    lifecycle.offer(state, "t", parts[:6])  # re-offering part 0..3 changes nothing
    lifecycle.offer(state, "t", parts, ends=TABLE)
    assert offers.offered(source) == [*parts, source / offers.EOF_FILE]
    assert lifecycle.input_ended(state, ["t"])
    assert _stream(spark, source, tmp_path / "ck") == [[4], [5], [6], [None]]
    # Each offer rewrote the whole list; two log files are kept.
    assert sorted(p.name for p in (source / offers.LOG).iterdir()) == ["19.compact",
                                                                       "29.compact"]


def test_only_staged_parts_and_the_end_marker_can_be_offered(tmp_path):
    (tmp_path / "x.parquet").write_text("x")
    with pytest.raises(ValueError, match="x.parquet: neither a staged part"):
        offers.offer(tmp_path, [tmp_path / "x.parquet"])
