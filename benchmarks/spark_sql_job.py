"""A query written by hand in Spark SQL, as a data engineer would submit it: the baseline that
``twinflow run --mode batch`` is compared with (benchmarks/whole_process.py).

    python benchmarks/spark_sql_job.py --query SQL --out DIR \\
        --table NAME=CSV --schema "a INT, ts TIMESTAMP" [--table ... --schema ...]

Spark's CSV reader (header, the given schema), the query, Spark's CSV writer; local[2] and
Spark's other defaults (adaptive execution on).
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--query", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", action="append", required=True)
    ap.add_argument("--schema", action="append", required=True)
    args = ap.parse_args()
    spark = SparkSession.builder.master("local[2]").appName("spark_sql_job").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for table, schema in zip(args.table, args.schema, strict=True):
        name, path = table.split("=", 1)
        spark.read.csv(path, header=True, schema=schema,
                       timestampFormat="yyyy-MM-dd HH:mm:ss[.SSS]").createOrReplaceTempView(name)
    spark.sql(args.query).write.mode("overwrite").csv(args.out, header=True)
    spark.stop()


if __name__ == "__main__":
    main()
