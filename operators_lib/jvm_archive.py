"""A class-data archive (Java's AppCDS) of the Spark driver JVM: the classes a twinflow run
loads, already parsed and verified, mapped into each new driver instead of being read from
Spark's jars again. Measured on this project's 2-core machine (docs/BENCHMARKS.md): a
trivial spark-submit 9.0 s -> 5.3 s wall, 13.7 -> 8.0 CPU-s.

``twinflow jvm-archive`` (run by ``bootstrap.sh``) builds it once per Java, Spark and class
path: a small run of twinflow's own (``_warm_up``) in a child process whose JVM writes the
classes it loaded at exit (``-XX:ArchiveClassesAtExit``). Drivers that twinflow launches
(``get_spark``, the DAGs' spark-submit) then get ``-XX:SharedArchiveFile``. A JVM whose class
path differs from the archive's (another SPARK_CONF_DIR, extra jars) or whose archive is
missing, as on another machine, starts as without it: the JVM checks, and its CDS messages
are switched off so that this stays silent.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Environment that changes the driver's class path (Spark's launcher puts these before its jars).
_CLASS_PATH_ENV = ("SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH",
                   "SPARK_CLASSPATH")
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
_WARM_UP_SQL = """CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts
  ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t;
"""
_WARM_UP_JOIN = """CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
SELECT a.k, COUNT(*) AS n, MAX(b.v) AS m FROM t a JOIN t b ON a.k = b.k GROUP BY a.k;
"""


def path() -> Path:
    """Where the archive of this Java, Spark and class path is (it may not exist)."""
    # Not importing pyspark: the DAG files call this when Airflow parses them.
    spark = importlib.util.find_spec("pyspark")
    java = os.environ.get("JAVA_HOME", "") or os.path.realpath(shutil.which("java") or "java")
    key = "\0".join([java, importlib.metadata.version("pyspark"), str(spark and spark.origin),
                     *(os.environ.get(k, "") for k in _CLASS_PATH_ENV)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(sys.prefix) / "share" / "twinflow" / f"spark-driver-{digest}.jsa"


def java_options() -> str:
    """Driver JVM options that use the archive, or nothing if it was not built."""
    archive = path()
    return options_for(archive) if archive.is_file() else ""


def options_for(archive: Path) -> str:
    """JVM options that use ``archive`` where the JVM can, silently (none where it cannot)."""
    return f"-XX:SharedArchiveFile={archive} {_QUIET}"


def build(force: bool = False) -> Path:
    """Build the archive (unless it exists and not ``force``); returns its path. Raises
    RuntimeError with the child's output if the warm-up run failed."""
    archive = path()
    if archive.is_file() and not force:
        return archive
    archive.unlink(missing_ok=True)  # a driver started from it would not dump a new one
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.{os.getpid()}")
    env = dict(os.environ)
    env["SPARK_SUBMIT_OPTS"] = (f"{env.get('SPARK_SUBMIT_OPTS', '')} "
                                f"-XX:ArchiveClassesAtExit={tmp} {_QUIET}").strip()
    proc = subprocess.run([sys.executable, "-m", "operators_lib.jvm_archive"], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"the warm-up run failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
    os.replace(tmp, archive)
    return archive


def _warm_up() -> None:
    """A run in both modes of an OVER and a join feeding an aggregate: ingest, staging, the
    streaming query and its state store, batch, parity and the CSV writers load their classes."""
    from operators_lib.pipeline import RunConfig, run
    from operators_lib.spark import get_spark

    spark = get_spark("local[2]", app="twinflow-jvm-archive")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "t.csv"
        data.write_text("k,v,ts\n" + "".join(
            f"{'ab'[i % 2]},{i},2024-01-01 00:00:{i:02d}\n" for i in range(12)))
        for i, sql in enumerate((_WARM_UP_SQL, _WARM_UP_JOIN)):
            query = work / f"q{i}.sql"
            query.write_text(sql)
            result = run(RunConfig([query], {"t": data}, "both", work / f"out{i}", 3), spark)
            if result.exit_code != 0:
                raise SystemExit(f"warm-up query {i}: exit {result.exit_code} {result.message}")
    spark.stop()


if __name__ == "__main__":
    _warm_up()
