"""The publish step of every run: its outputs into place, all or nothing. A bounded run
(``twinflow run``) moves the files its steps wrote into ``pending/`` to ``--out`` and writes
report.json there last, having removed the one before first: outputs beside a report.json
are one run's whole (a local disk, HDFS or S3). A scheduled run, once its DAG's gate passed
(jobs/gates.py), is copied into ``published/<query>/<interval>/`` (whole: ``_scheduled``) and
``LATEST`` points at it."""

from __future__ import annotations

import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.engine.stores import store_of
from operators_lib.io import ingest, storage
from operators_lib.io.output import write_csv_frame, write_text
from operators_lib.io.sink_files import commit
from operators_lib.io.storage import Place
from operators_lib.ops.reports import VALIDATION, BoundedReport, ParityReport, StreamReport
from operators_lib.paths import published_dir
from operators_lib.plan import ROWNUM, quote
from operators_lib.runs.spec import RunSpec
from operators_lib.runs.staging import Run
from operators_lib.scan import staged_schema
from operators_lib.state.manifest import Manifest
from operators_lib.types import FlinkType
from operators_lib.udf.rejects import REASON, rejected_rows

SUCCESS = "_SUCCESS"  # in a published interval: it is whole
SINK_RECORDS = "_sink"  # in --out: the files a bounded run's INSERT INTO put in place
# (a run's results in its format: query_config.publish_format, output.write_result)
PUBLISHED = ("stream.parquet", "changes.parquet", "batch.parquet", "stream.csv", "changes.csv",
             "batch.csv", ParityReport.FILE, VALIDATION, StreamReport.FILE, "rejected.csv")


def publish(spec: RunSpec, run: Run | None) -> Place:
    """Publish the run (module docstring; ``run``: a bounded run's steps so far); returns where
    its outputs are."""
    if not spec.bounded:
        return _scheduled(spec)
    _bounded(run)
    return spec.out


def _bounded(run: Run) -> None:
    """Move a bounded run's outputs into place and write report.json."""
    out, report = run.spec.out, run.report
    report.late_rows = 0 if report.stream is None else report.stream.late_rows
    udf = _udf_rejects(run)
    report.rejected_rows = ingest.write_rejected(run.parsed, run.pending / "rejected.csv", udf)
    if udf is not None:
        report.udf_rejected_rows = report.rejected_rows - sum(
            run.parsed.rejected(k) for k in run.parsed.files)
    storage.rmtree(run.parsed.dir)  # staged: the parsed copy is not needed
    report.timings_s["total"] = round(time.perf_counter() - run.t0, 3)
    report.outputs = {name: str(out / name)
                      for name in [*run.written, "rejected.csv", BoundedReport.FILE]}
    # report.json is the commit: gone before any output is replaced, written after the last,
    # so outputs beside a report.json are all of one run, on a store too.
    (out / BoundedReport.FILE).unlink(missing_ok=True)
    for name in [*run.written, "rejected.csv"]:
        storage.replace(run.pending / name, out / name)
    # (records not in the state: a new run's starts empty)
    commit(run.pending, out / SINK_RECORDS, store_of(SparkSession.getActiveSession()))
    storage.rmtree(run.pending / ".result")  # an updating stream's result
    report.save(out)


def _udf_rejects(run: Run) -> Path | None:
    """The input rows a Python function failed on, in reject mode (udf/rejects.py), as
    rejected.csv's lines (its header first) in a file of their own; None without reject mode.
    ``file``: the input file the row came from; ``row``: its values as JSON."""
    spark = SparkSession.getActiveSession()
    rows = rejected_rows(run.plan, lambda node: batch_dataframe(spark, node, run.pool))
    if rows is None:
        return None
    staged = Manifest.load(run.spec.state)
    tables = {t.name: (k, t) for k, t in run.tables.items()}
    picked = None
    for name, (key, table) in tables.items():
        which = F.lit(None).cast("string")
        for file, entry in staged.table(key).files.items():
            which = F.when((F.col(ROWNUM) >= entry.first_row) & (
                F.col(ROWNUM) < entry.first_row + entry.rows), F.lit(file)).otherwise(which)
        values = spark.read.schema(staged_schema(table)).parquet(*map(str, run.pool[key]))
        part = rows.where(F.col("table") == name).join(values, ROWNUM).select(
            F.col("table"), which.alias("file"), F.lit(None).cast("string").alias("line"),
            F.concat(F.lit("input row "), F.col(ROWNUM).cast("string"), F.lit(" (0-based, of "
                     "the table's valid rows): "), F.col(REASON)).alias("reason"),
            F.to_json(F.struct(*[F.col(quote(c.name)) for c in table.physical])).alias("row"),
            F.col(ROWNUM))
        picked = part if picked is None else picked.unionByName(part)
    path = run.pending / ".udf_rejected.csv"
    string = FlinkType.parse("STRING")
    write_csv_frame(picked, path, dict.fromkeys(ingest.REJECTED_COLUMNS, string),
                    ingest.REJECTED_COLUMNS, order=["table", ROWNUM])
    return path


def _scheduled(spec: RunSpec) -> Place:
    """Copy the validated run into published/<query>/<interval>/ whole (storage.whole_dir:
    renamed into place where the store renames, ``_SUCCESS`` last on every store), then point
    ``LATEST`` at it unless a later interval is published: readers see the old or the new
    version, never half (on S3: an interval without ``_SUCCESS`` is not one)."""
    run, run_key = spec.out, spec.key
    target_root = published_dir(spec.name)
    final = target_root / run_key
    present = storage.files(run)  # one listing (on S3: not two requests per name)
    with storage.whole_dir(final, SUCCESS) as copy:
        for path in present:
            if path.split("/", 1)[0] in PUBLISHED:  # a file, or a directory's
                storage.copy(run / path, copy / path)
        write_text(copy / SUCCESS, "")
    commit(run, spec.state / "sink")  # an INSERT INTO's files, the interval's own replaced
    latest = target_root / "LATEST"
    if not latest.exists() or latest.read_text().strip() <= run_key:
        # A re-run of an earlier interval replaces its own version only.
        write_text(latest, run_key + "\n")
    return final
