"""Backfill: a scheduled query's results for chosen data intervals, recomputed in batch mode
from the retained input, into the layout scheduled runs publish (``twinflow_backfill_<query>``).

For each recorded run whose interval lies in ``[start, end]`` (``runs/<key>.json`` in the
query's state: the staged parts it covered), batch runs over every part staged up to that run
and writes ``<out>/<key>/``: ``stream.csv`` as the scheduled run published it (an updating
query: its whole result then; an append-only one: the rows that interval added, the batch
result up to it less the one up to the previous run, as multisets), ``stream_report.json`` and
``parity.json`` (``"verdict": "batch_backfill"``). The DAG then gates each interval with the
query's suite and publishes it (jobs/gates.py), replacing what that interval had published.
Only reads the state: it may run while the query's DAG runs.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from operators_lib import lifecycle
from operators_lib.batch import batch_dataframe
from operators_lib.errors import InputError
from operators_lib.incremental import QueryConfig, plan_for
from operators_lib.output import write_csv_frame, write_json
from operators_lib.plan import Node, append_only, quote, source_tables

VERDICT = "batch_backfill"


def backfill(cfg: QueryConfig, spark: SparkSession, state: Path, out: Path, start: str,
             end: str) -> dict:
    """Recompute the intervals in ``[start, end]`` (module docstring); returns per interval
    its rows."""
    keys = [k for k in lifecycle.run_keys(state) if start <= k <= end]
    if not keys:
        known = lifecycle.run_keys(state)
        raise InputError(f"query {cfg.name}: no recorded run in [{start}, {end}] ("
                         + (f"runs from {known[0]} to {known[-1]}" if known else "no runs yet")
                         + "): a backfill recomputes intervals the query has staged input for")
    plan = plan_for(cfg, spark)
    done = {}
    for key in keys:
        record = lifecycle.run_record(state, key)
        rows = _upto(spark, plan, state, record)
        previous = lifecycle.previous_record(state, key)
        if append_only(plan) and previous is not None:
            rows = rows.exceptAll(_upto(spark, plan, state, previous))
        run = out / key
        written = write_csv_frame(rows, run / "stream.csv", {f.name: f.type for f in plan.fields},
                                  [f.name for f in plan.fields])["rows"]
        write_json(run / "stream_report.json", {
            "query": cfg.name, "interval": key, "backfill": True,
            "new_input_rows": {t: record["rows"].get(t, 0) - (previous or {"rows": {}})["rows"]
                               .get(t, 0) for t in record["rows"]},
            "late_rows": 0, "rejected_rows": 0, "watermark": None})
        write_json(run / "parity.json", {"verdict": VERDICT, "emitted_rows": written})
        done[key] = written
    return {"query": cfg.name, "intervals": done}


def _upto(spark: SparkSession, plan: Node, state: Path, record: dict) -> DataFrame:
    """Batch over the parts staged up to the run of ``record``: the query's columns."""
    pool = {t: lifecycle.staged_files(state, t)[:record["parts"].get(t, 0)]
            for t in source_tables(plan)}
    return batch_dataframe(spark, plan, pool).select(*[F.col(quote(f.name))
                                                       for f in plan.fields])
