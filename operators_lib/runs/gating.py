"""The quality gate of a scheduled run (and of each backfilled interval), in the Spark
application that made the run: the run's result (``stream.parquet/``, or ``stream.csv`` read
back with its columns' types, which stream_report.json lists) read by the executors and
validated as a Spark DataFrame by the
query's Great Expectations suite (ops/quality.py), plus the facts only the run knows: for
OVER, one output row per on-time input row the run emitted. The verdict goes to
``validation.json`` and the run history; the DAG's ``validate`` task reads it and fails the
run on a failed critical expectation (jobs/gates.py), so nothing is published and no Airflow
worker loads the output."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from operators_lib.io.output import read_csv_frame
from operators_lib.ops import history
from operators_lib.ops.quality import validate
from operators_lib.ops.reports import VALIDATION, ParityReport, StreamReport
from operators_lib.runs.query_config import QueryConfig


def gate(cfg: QueryConfig, spark: SparkSession, state: Path, run: Path) -> dict:
    """Validate the run in ``run`` (its directory, named by its interval); returns the
    summary written to ``run/validation.json``."""
    stream, parity = StreamReport.load(run), ParityReport.load(run)
    runtime = []
    if cfg.one_row_per_input_row:
        # OVER emits one row per on-time input row once the watermark passes it: the run's
        # output holds exactly the rows parity checked, one per input row it emitted.
        runtime.append({"type": "expect_table_row_count_to_equal",
                        "kwargs": {"value": parity.emitted_rows}})
    # read once, cached while GX's expectations each run their jobs over it
    parquet = run / "stream.parquet"
    rows = (spark.read.parquet(str(parquet)) if parquet.exists() else read_csv_frame(
        spark, run / "stream.csv", [(c.name, c.type) for c in stream.columns])).persist()
    try:
        summary = validate(rows, cfg.expectations, run.name, runtime, run / VALIDATION)
    finally:
        rows.unpersist()
    if not stream.backfill:  # (a backfill's gate does not replace the run's own outcome)
        history.record_outcome(state, run.name, gate=(
            "failed" if not summary["success"] else
            "passed_with_warnings" if summary["warnings"] else "passed"))
    return summary
