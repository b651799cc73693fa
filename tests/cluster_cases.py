"""Run corpus cases on a Spark cluster from one driver (tests/test_cluster.py starts it in a
process of its own: a Python process holds one SparkContext).

    python -m tests.cluster_cases --master spark://127.0.0.1:PORT --out DIR CASE [CASE ...]

Each case runs in stream mode (several micro-batches) into ``DIR/<feature>__<case>/`` (batch
mode runs on the cluster in the test's DAG run); the last line printed is JSON: per case the
exit code and micro-batches, and where the executors' Python workers imported
``operators_lib`` from.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tests.caselib import CASES, Case


def _imported_from(_: object) -> str:
    import operators_lib

    return operators_lib.__file__


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    from operators_lib.engine.spark import get_spark
    from tests.cluster import INTERPRETED, cluster_jvm_options

    spark = get_spark(args.master, app="twinflow-cluster-cases",
                      # a cluster keeps Spark's 200 shuffle partitions unless told: as a user
                      conf={"spark.executor.extraJavaOptions": cluster_jvm_options(),
                            "spark.sql.shuffle.partitions": "2", **INTERPRETED})
    executors = spark.sparkContext.parallelize(range(4), 4).map(_imported_from).collect()
    results = {}
    for case_id in args.cases:
        result = Case(CASES / case_id).run(spark, args.out / case_id.replace("/", "__"),
                                           mode="stream")
        stream = result.report.stream
        results[case_id] = {"exit_code": result.exit_code, "message": result.message,
                            "micro_batches": stream and stream.micro_batches_this_run}
    ui = spark.sparkContext.uiWebUrl
    spark.stop()
    print(json.dumps({"executor_code": executors, "cases": results, "ui": ui}))


if __name__ == "__main__":
    main()
