"""Run a streaming DataFrame to completion (``availableNow``) and keep its changelog.

The sink writes each micro-batch's changelog to ``<changelog_dir>/batch-<id>.parquet``, rows
in emission order (event time, then arrival). Writing by batch id makes a replayed batch (after
a failure between the write and Spark's commit) overwrite its own file: exactly-once output.
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

from operators_lib.output import result_frame
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
        if table.num_rows == 0:
            return
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


def read_changelog(changelog_dir: Path) -> pd.DataFrame | None:
    files = sorted(changelog_dir.glob("batch-*.parquet"))
    if not files:
        return None
    tables = [pq.read_table(f) for f in files]
    return result_frame(pa.concat_tables(tables, promote_options="default"))
