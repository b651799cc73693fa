"""Backfill: a scheduled query's results for chosen data intervals, recomputed in batch mode
from the retained input, into the layout scheduled runs publish (``twinflow_backfill_<query>``).

For each recorded run whose interval lies in ``[start, end]`` (``runs/<key>.json`` in the
query's state: the staged parts and rows it covered), batch runs the query's current SQL over
every part staged up to that run and writes ``<out>/<key>/``, in the layout a scheduled run
publishes: ``stream.csv``, ``stream_report.json`` and ``parity.json`` (``"verdict":
"batch_backfill"``). What an interval holds, in batch semantics (no row is late):

- an updating query (joins, GROUP BY, TopN): its whole result as of the interval, as the
  scheduled run published it;
- an append-only query over one table: of the result over the input up to the range's last
  interval, the rows whose input row arrived in the interval (their arrival numbers in its
  range; a window aggregate's row: its window's first row), complete: batch has no watermark.
  A scheduled run publishes a row when the watermark passes it, so an interval's rows can
  differ between the two, while all the intervals together hold the same rows;
- an append-only query over several tables (an interval or window join) is refused: its rows
  belong to no one interval.

The DAG then gates each interval with the query's suite and publishes it (jobs/gates.py),
replacing what that interval had published. Only reads the state: it may run while the
query's DAG runs.
"""

from __future__ import annotations

from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.engine.stores import store_of
from operators_lib.errors import InputError
from operators_lib.io.output import write_result
from operators_lib.io.sink_files import stage
from operators_lib.ops.reports import BackfillReport, ParityReport, StreamReport
from operators_lib.plan import ROWNUM, Node, append_only, quote, source_tables
from operators_lib.runs.spec import RunSpec
from operators_lib.runs.staging import columns_of
from operators_lib.state import lifecycle
from operators_lib.state.lifecycle import RunRecord

VERDICT = "batch_backfill"


def backfill(spec: RunSpec, spark: SparkSession, plan: Node) -> BackfillReport:
    """Recompute the intervals ``spec.key`` .. ``spec.through`` (module docstring) into
    ``spec.out``; returns per interval its rows."""
    state, out, start, end = spec.state, spec.out, spec.key, spec.through
    keys = [k for k in lifecycle.run_keys(state) if start <= k <= end]
    if not keys:
        known = lifecycle.run_keys(state)
        raise InputError(f"query {spec.name}: no recorded run in [{start}, {end}] ("
                         + (f"runs from {known[0]} to {known[-1]}" if known else "no runs yet")
                         + "): a backfill recomputes intervals the query has staged input for")
    tables = [k for k, t in source_tables(plan).items() if not t.constant]
    if append_only(plan) and len(tables) != 1:
        raise InputError(f"query {spec.name}: a backfill of an append-only query over several "
                         "tables (an interval or window join) is not supported: its rows "
                         "belong to no one interval")
    # An append-only result over the input up to the last interval, cut by arrival below.
    whole = _batch(spark, plan, state, lifecycle.run_record(state, keys[-1])).persist(
        StorageLevel.DISK_ONLY) if append_only(plan) else None
    done = {}
    for key in keys:
        record = lifecycle.run_record(state, key)
        previous = lifecycle.previous_record(state, key)
        earlier = previous.rows if previous else {}
        if whole is not None:  # the rows whose input arrived in the interval
            first = earlier.get(tables[0], 0)
            rows = whole.where((F.col(ROWNUM) >= first)
                               & (F.col(ROWNUM) < record.rows.get(tables[0], 0)))
        else:
            rows = _batch(spark, plan, state, record)
        run = out / key
        if spec.sink is not None:  # the interval's files of the INSERT INTO, to replace its own
            stage(rows, spec.sink, store_of(spark), key, [(f.name, f.type) for f in plan.fields],
                  [ROWNUM] if ROWNUM in rows.columns else [], run)
        rows = rows.select(*[F.col(quote(f.name)) for f in plan.fields])
        written = write_result(rows, run / "stream", spec.publish_format,
                               {f.name: f.type for f in plan.fields}, [f.name for f in plan.fields])
        StreamReport(query=spec.name, interval=key, backfill=True,
                     new_input_rows={t: n - earlier.get(t, 0) for t, n in record.rows.items()},
                     late_rows=0, rejected_rows=0, watermark=None,
                     columns=columns_of(plan)).save(run)
        ParityReport(verdict=VERDICT, emitted_rows=written).save(run)
        done[key] = written
    if whole is not None:
        whole.unpersist()
    return BackfillReport(query=spec.name, intervals=done)


def _batch(spark: SparkSession, plan: Node, state: Path, record: RunRecord) -> DataFrame:
    """Batch over every part staged up to the run of ``record``."""
    return batch_dataframe(spark, plan, lifecycle.staged_as_of(state, record,
                                                               source_tables(plan)))


