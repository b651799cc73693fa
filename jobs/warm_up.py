"""The run whose classes the Spark driver's class-data archive holds
(operators_lib/engine/jvm_archive.py; ``twinflow jvm-archive`` runs it as ``python -m``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from operators_lib.engine.spark import get_spark
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import RunSpec

_WARM_UP_SQL = """CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts
  ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t;
"""
_WARM_UP_JOIN = """CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
SELECT a.k, COUNT(*) AS n, MAX(b.v) AS m FROM t a JOIN t b ON a.k = b.k GROUP BY a.k;
"""


def main() -> None:
    """A run in both modes of an OVER and a join feeding an aggregate: ingest, staging, the
    streaming query and its state store, batch, parity and the CSV writers load their classes."""
    spark = get_spark("local[2]", app="twinflow-jvm-archive")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "t.csv"
        data.write_text("k,v,ts\n" + "".join(
            f"{'ab'[i % 2]},{i},2024-01-01 00:00:{i:02d}\n" for i in range(12)))
        for i, sql in enumerate((_WARM_UP_SQL, _WARM_UP_JOIN)):
            query = work / f"q{i}.sql"
            query.write_text(sql)
            result = run(RunSpec.bounded_run([query], {"t": data}, "both", work / f"out{i}", 3),
                         spark)
            if result.exit_code != 0:
                raise SystemExit(f"warm-up query {i}: exit {result.exit_code} {result.message}")
    spark.stop()


if __name__ == "__main__":
    main()
