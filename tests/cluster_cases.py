"""Run corpus cases on a Spark cluster from one driver (tests/test_cluster.py starts it in a
process of its own: a Python process holds one SparkContext).

    python -m tests.cluster_cases --master spark://127.0.0.1:PORT --out URI CASE [CASE ...] \
        [--conf KEY=VALUE ...]

Each case's input files are uploaded under ``URI/<feature>__<case>/input/`` and the case runs
in stream mode (several micro-batches) from there into ``URI/<feature>__<case>/out/`` (an
``s3a://`` or ``hdfs://`` URI: nothing of a case on the driver's disk; batch mode runs on the
cluster in the test's DAG run). ``--conf``: Spark settings (the store's). The last line
printed is JSON: per case the exit code and micro-batches, and where the executors' Python
workers imported ``operators_lib`` from.
"""

from __future__ import annotations

import argparse
import json

from tests.caselib import CASES, Case


def _imported_from(_: object) -> str:
    import operators_lib

    return operators_lib.__file__


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--conf", action="append", default=[])
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    from operators_lib.engine.spark import get_spark
    from operators_lib.engine.stores import store_of
    from operators_lib.io import storage
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec, Steps
    from tests.cluster import INTERPRETED, cluster_jvm_options

    spark = get_spark(args.master, app="twinflow-cluster-cases",
                      # a cluster keeps Spark's 200 shuffle partitions unless told: as a user
                      conf={"spark.executor.extraJavaOptions": cluster_jvm_options(),
                            "spark.sql.shuffle.partitions": "2", **INTERPRETED,
                            **dict(c.split("=", 1) for c in args.conf)})
    storage.use(store_of(spark))
    executors = spark.sparkContext.parallelize(range(4), 4).map(_imported_from).collect()
    results = {}
    for case_id in args.cases:
        case, root = Case(CASES / case_id), f"{args.out}/{case_id.replace('/', '__')}"
        data = {}
        for table, path in case.data.items():
            data[table] = f"{root}/input/{path.name}"
            storage.place(data[table], "input").write_bytes(path.read_bytes())
        result = run(RunSpec.bounded_run(case.sql, data, "stream",
                                         storage.place(f"{root}/out", "--out")), spark, Steps.RUN)
        stream = result.report.stream
        results[case_id] = {"exit_code": result.exit_code, "message": result.message,
                            "micro_batches": stream and stream.micro_batches_this_run}
    ui = spark.sparkContext.uiWebUrl
    spark.stop()
    print(json.dumps({"executor_code": executors, "cases": results, "ui": ui}))


if __name__ == "__main__":
    main()
