"""``twinflow state inspect``: what a query's state holds, per stateful operator.

Read at the checkpoint's last committed micro-batch with Spark's state data sources
(``state-metadata`` lists the operators and their state variables, ``statestore`` reads one),
as Spark jobs: the executors decode the values and the driver receives one row of sums per
state variable. Per operator:

- ``rows``: Spark's state entries. GROUP BY and TopN keep one page per slot
  (stream/rows.py); the processing-time temporal join one value per operator key; the regular
  join, OVER, keep-first deduplication, windows, interval and event-time temporal joins one
  page per bucket.
- ``keys``: operator keys held: counted in the pages of GROUP BY, TopN, the regular join,
  OVER and deduplication, one per entry for per-key values; None where a page per bucket
  holds no key list (windows, interval and event-time temporal joins).
- ``bytes``: the size of the stored values (what RocksDB holds, before its own compression);
  ``disk_bytes``: the operator's directory in the checkpoint (every version Spark retains).
- ``oldest_write_age_s`` (operators with state TTL): the age of the least recently written
  record, which a compaction drops once it exceeds the TTL.

Also the micro-batch, the watermark in force and the age of the last commit.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from operators_lib.errors import InputError
from operators_lib.ops.history import tree_bytes
from operators_lib.stream.join import codes
from operators_lib.stream.rows import WRITTEN
from operators_lib.stream.runner import batch_metadata, last_commit
from operators_lib.stream.state_view import StateView

_PAGES = {"group", "topn"}  # MapState: slot -> a row per key (stream/rows.py)
_BUCKET_PAGES = {"over", "dedup_first"}  # ValueState: a page per bucket with its keys' columns
_JOIN = "join"  # ValueState: a page per bucket with each side's records (stream/join.py)
_PER_KEY = {"latest"}  # ValueState: one per operator key
_DECODED = _PAGES | _BUCKET_PAGES | {_JOIN}  # pages whose keys are counted


def inspect(spark: SparkSession, state: Path) -> dict:
    """The state's operators (module docstring), as one JSON-ready dict."""
    checkpoint = state / "checkpoint"
    batch = last_commit(checkpoint)
    if batch < 0:
        raise InputError(f"{state}: the stream has committed no micro-batch yet: no state")
    watermark_ms = batch_metadata(checkpoint, batch).get("batchWatermarkMs", 0)
    operators = []
    for op in sorted(spark.read.format("state-metadata").load(str(checkpoint)).collect(),
                     key=lambda r: r.operatorId):
        props = json.loads(op.operatorProperties or "{}")
        # ("$..." names are Spark's own: the timers of an event-time operator)
        names = [v["stateName"] for v in props.get("stateVariables", [])
                 if not v["stateName"].startswith("$")]
        for name in names or [None]:
            operators.append({"operator": name or op.operatorName, "id": op.operatorId,
                              "kind": op.operatorName, "partitions": op.numPartitions,
                              **_variable(spark, checkpoint, op.operatorId, op.operatorName,
                                          name),
                              "disk_bytes": tree_bytes(checkpoint / "state" /
                                                       str(op.operatorId))})
    committed = (checkpoint / "commits" / str(batch)).stat().st_mtime
    return {"state": str(state), "batch_id": batch,
            "watermark": _watermark_text(watermark_ms),
            "last_commit_age_s": round(time.time() - committed, 1),
            "checkpoint_bytes": tree_bytes(checkpoint), "operators": operators}


_LAST_TIME_MS = 253_402_300_799_999  # 9999-12-31 23:59:59.999, the last valid event time


def _watermark_text(ms: int) -> str | None:
    """The watermark in force: None before the first, "end of input" once the end-of-input
    marker (an event time far past year 9999, less the WATERMARK delay) has passed."""
    if not ms:
        return None
    if ms > _LAST_TIME_MS:
        return "end of input"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()


def _variable(spark: SparkSession, checkpoint: Path, op_id: int, op_name: str,
              name: str | None) -> dict:
    reader = spark.read.format("statestore").option("operatorId", op_id)
    if name is None:  # Spark's own operator (the stream-stream inner window join of TVF rows)
        sides = ("left", "right") if "Join" in op_name else (None,)
        rows = sum((reader.option("joinSide", s) if s else reader).load(str(checkpoint)).count()
                   for s in sides)
        return {"rows": rows, "keys": None, "bytes": None}
    df = reader.option("stateVarName", name).load(str(checkpoint))
    blob = F.col("user_map_value.blob" if "user_map_value" in df.columns else "value.blob")
    if name in _DECODED:
        stats = F.pandas_udf(_page_stats(name), "keys long, oldest long")(blob)
        row = df.select(F.length(blob).alias("b"), stats.alias("s")).agg(
            F.count("*").alias("rows"), F.sum("b").alias("bytes"),
            F.sum("s.keys").alias("keys"), F.min("s.oldest").alias("oldest")).first()
    else:
        row = df.select(F.length(blob).alias("b")).agg(
            F.count("*").alias("rows"), F.sum("b").alias("bytes"),
            F.lit(None).alias("keys"), F.lit(None).alias("oldest")).first()
    keys = row["rows"] if name in _PER_KEY else (row["keys"] or 0) if name in _DECODED \
        else None
    out = {"rows": row["rows"], "keys": None if keys is None else int(keys),
           "bytes": row["bytes"] or 0}
    if row["oldest"] is not None:
        out["oldest_write_age_s"] = round(time.time() - row["oldest"] / 1000, 1)
    return out


def _page_stats(name: str):
    """A pandas UDF's function: per page (read through the operator's view,
    stream/state_view.py), its keys and the oldest TTL clock written in it."""
    view = StateView(name)

    def stats(blobs: pd.Series) -> pd.DataFrame:
        keys, oldest = [], []
        for blob in blobs:
            if name in _PAGES:  # a row per key; GROUP BY's with its TTL clock
                rows = view.loads_rows(blob)
                keys.append(rows.num_rows)
                oldest.append(pc.min(rows.column(WRITTEN)).as_py()
                              if WRITTEN in rows.column_names else None)
                continue
            page = view.loads(blob)
            if name == _JOIN:
                k, t = _join_page(page)
                keys.append(k)
                oldest.append(t)
                continue
            # stream/over.py, stream/dedup.py: no TTL clock
            keys.append(0 if page["keys"] is None else len(next(iter(page["keys"].values()))))
            oldest.append(None)
        return pd.DataFrame({"keys": keys, "oldest": pd.array(oldest, dtype="Int64")})
    return stats


def _join_page(page: dict) -> tuple[int, int | None]:
    """A join page's distinct join keys and the oldest TTL clock written in it (stream/join.py:
    0 without TTL)."""
    sides = [t for t in page["sides"] if t is not None]
    keys = [c for c in sides[0].column_names if c.startswith("tw__kv")]
    stacked = pa.concat_tables([t.select(keys) for t in sides])
    n = len(np.unique(codes(list(stacked.columns), stacked.num_rows)))
    oldest = min(pc.min(t.column(WRITTEN)).as_py() for t in sides)
    return n, oldest or None
