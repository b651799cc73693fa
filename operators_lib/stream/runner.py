"""Run a streaming DataFrame to completion (``availableNow``) and keep its changelog.

The sink writes each micro-batch's changelog to ``<changelog_dir>/batch-<id>.parquet``, rows
in emission order (event time, then arrival). Writing by batch id makes a replayed batch (after
a failure between the write and Spark's commit) overwrite its own file: exactly-once output.
Every batch writes its file, even without rows: ``read_changelog`` then checks the files against
the batches the checkpoint committed, so a missing segment is an error, not a wrong result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from operators_lib.errors import StateError
from operators_lib.plan import EMIT_TS, ROWNUM

_EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
_PUSH_DOWN = ",".join(f"org.apache.spark.sql.catalyst.optimizer.{r}" for r in (
    "PushDownPredicates", "PushPredicateThroughNonJoin"))


@dataclass
class StreamRun:
    micro_batches: int
    seconds: float
    progress: list[dict] = field(default_factory=list)


def run_available_now(df: DataFrame, checkpoint: Path, changelog_dir: Path) -> StreamRun:
    changelog_dir.mkdir(parents=True, exist_ok=True)

    def sink(batch: DataFrame, batch_id: int) -> None:
        table = batch.where(f"{ROWNUM} >= 0").toArrow()
        order = pc.sort_indices(table, sort_keys=[(EMIT_TS, "ascending"), (ROWNUM, "ascending")])
        tmp = changelog_dir / f".batch-{batch_id:08d}.parquet"
        pq.write_table(table.take(order), tmp)
        tmp.replace(changelog_dir / f"batch-{batch_id:08d}.parquet")

    start = time.perf_counter()
    conf = df.sparkSession.conf
    # Spark pushes filters below the watermark operator; then rows a WHERE drops (and the
    # end-of-input marker) would not advance the watermark. Flink assigns watermarks at the
    # source, before any filter: keep that order for the streaming query.
    conf.set(_EXCLUDED_RULES, _PUSH_DOWN)
    try:
        query = (df.writeStream.foreachBatch(sink).trigger(availableNow=True)
                 .option("checkpointLocation", str(checkpoint)).start())
        query.awaitTermination()
    finally:
        conf.unset(_EXCLUDED_RULES)
    seconds = time.perf_counter() - start
    progress = [p for p in query.recentProgress if p]
    batches = len({p["batchId"] for p in progress})
    return StreamRun(batches, seconds, progress)


def read_changelog(changelog_dir: Path, checkpoint: Path) -> pd.DataFrame | None:
    """The changelog of every micro-batch the checkpoint committed, in batch order (None before
    the first batch). StateError when a committed batch's file is missing or a file belongs to
    no committed batch: the state is damaged and no result may be computed from it."""
    files = {int(f.stem.removeprefix("batch-")): f for f in changelog_dir.glob("batch-*.parquet")}
    committed = range(last_commit(checkpoint) + 1)
    missing = [b for b in committed if b not in files]
    stray = sorted(set(files) - set(committed))
    if missing or stray:
        problems = []
        if missing:
            problems.append(f"the changelog of micro-batch(es) {_ids(missing)} is missing from "
                            f"{changelog_dir} (the checkpoint {checkpoint} committed batches "
                            f"0..{len(committed) - 1})")
        if stray:
            problems.append(f"{changelog_dir} holds micro-batch(es) {_ids(stray)} that the "
                            f"checkpoint {checkpoint} never committed")
        raise StateError("the stream's state is damaged: " + "; ".join(problems))
    if not files:
        return None
    tables = [pq.read_table(files[b]) for b in committed]
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def last_commit(checkpoint: Path) -> int:
    """The id of the last micro-batch the checkpoint committed; -1 for none (Spark writes
    ``commits/<id>`` once a batch's output is complete and drops the oldest ones)."""
    ids = [int(f.name) for f in (checkpoint / "commits").glob("*") if f.name.isdigit()]
    return max(ids, default=-1)


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
