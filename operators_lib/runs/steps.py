"""Steps every run takes, whether bounded (``twinflow run``: pipeline.py) or scheduled
(incremental.py): parse the input it brings, and record what its stream step covered."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from operators_lib.catalog import TableDef
from operators_lib.io import ingest
from operators_lib.ops import metrics
from operators_lib.plan import Node, source_tables
from operators_lib.sql import nonfinite
from operators_lib.state import lifecycle
from operators_lib.stream.runner import StreamRun

PARSED = "parsed"  # in the state: the input as the executors parsed it (ingest.py)


def parse(spark: SparkSession, plan: Node, files: dict[str, tuple[TableDef, list[Path]]],
          state: Path) -> ingest.Parsed:
    """Parse the input files on the executors into ``state``/``PARSED``: a bad header
    fails the run here, and so does a NaN or Infinity the query cannot take (nonfinite.py)."""
    parsed = ingest.parse(spark, files, state / PARSED)
    nonfinite.check(plan, parsed.nonfinite())
    return parsed


def record(state: Path, key: str, kind: str, plan: Node, srun: StreamRun, first_batch: int,
           last_batch: int, report: dict, new_rows: dict[str, int], rejected_rows: int,
           late_rows: int, topn_split: int, replayed: bool = False,
           waited_s: dict[str, float] | None = None) -> None:
    """Record the run ``key``'s stream step: what it covered, in the state's run records
    (lifecycle.record_run), and its row in the metrics history (``kind``: "twinflow run" or
    "scheduled"; ``new_rows`` and ``waited_s``, how long its oldest new file waited, per
    table key)."""
    lifecycle.record_run(state, key, first_batch, last_batch, report, replayed=replayed,
                         topn_split=topn_split)
    tables = {k: t for k, t in source_tables(plan).items() if not t.constant}
    marks = lifecycle.table_watermarks(state, tables)
    metrics.record_run(state, key, kind, srun.progress, sum(new_rows.values()), rejected_rows,
                       late_rows, srun.seconds,
                       [(t.name, new_rows.get(k, 0), marks[k], (waited_s or {}).get(k))
                        for k, t in tables.items()])
