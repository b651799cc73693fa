"""A class-data archive (Java's AppCDS) of the Spark driver JVM: the classes a twinflow run
loads, already parsed and verified, mapped into each new driver instead of being read from
Spark's jars again. Measured on this project's 2-core machine (docs/BENCHMARKS.md): a
trivial spark-submit 9.0 s -> 5.3 s wall, 13.7 -> 8.0 CPU-s.

``twinflow jvm-archive`` (run by ``bootstrap.sh``) builds it once per Java, Spark and class
path (about a minute): a small run of twinflow's own (jobs/warm_up.py) in a child process whose
JVM writes the classes it loaded at exit (``-XX:ArchiveClassesAtExit``). Drivers that
twinflow launches (``get_spark``, the DAGs' spark-submit) then get ``-XX:SharedArchiveFile``.
The archive's name is a hash of what the JVM checks before it uses one (the java binary, the
jars, the environment that puts directories before them, the object-store connector jars that
twinflow puts before them: engine/stores.py); another SPARK_CONF_DIR or a
reinstalled Spark is another name, not yet built, and drivers start without. Where the JVM
still cannot use it, or it is missing, as on a machine that never built it, the JVM starts as
without it: its CDS messages are switched off so that this stays silent.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from operators_lib.engine import stores

# Environment that changes the driver's class path (Spark's launcher puts these before its jars).
_CLASS_PATH_ENV = ("SPARK_HOME", "SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR",
                   "SPARK_DIST_CLASSPATH", "SPARK_CLASSPATH")
# Options of the user's that conflict with the archive (HotSpot refuses to start with a dump
# option and a dynamic archive), or take CDS into their own hands: then no archive.
_USER_CDS = ("SharedArchiveFile", "ArchiveClassesAtExit", "AutoCreateSharedArchive",
             "RecordDynamicDumpInfo", "-Xshare")
# Every CDS message off (the JVM's mismatch warnings go to stdout, the console).
_QUIET = "-Xlog:cds*=off"
OFF = "TWINFLOW_JVM_ARCHIVE"  # =off: no archive


def _stamp(path: str) -> str:
    """A file's identity as the JVM checks it (a reinstalled jar or JVM has a new mtime)."""
    try:
        st = os.stat(path)
    except OSError:
        return path
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def path() -> Path:
    """Where the archive of this Java, Spark and class path is (it may not exist)."""
    # Not importing pyspark: the DAG files call this when Airflow parses them.
    jars = Path(importlib.util.find_spec("pyspark").origin).parent / "jars"
    java = os.path.realpath(os.path.join(os.environ["JAVA_HOME"], "bin", "java")
                            if os.environ.get("JAVA_HOME") else shutil.which("java") or "java")
    key = "\0".join([_stamp(java), _stamp(str(jars)), importlib.metadata.version("pyspark"),
                     *(os.environ.get(k, "") for k in _CLASS_PATH_ENV),
                     stores.classpath() or ""])  # before Spark's jars (engine/spark.py)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(sys.prefix) / "share" / "twinflow" / f"spark-driver-{digest}.jsa"


def java_options(user_options: str = "") -> str:
    """Driver JVM options that use the archive; nothing if it was not built, if
    ``$TWINFLOW_JVM_ARCHIVE`` is ``off``, or if the user's JVM options (``user_options``,
    ``$SPARK_SUBMIT_OPTS``) take class-data sharing into their own hands."""
    mine = f"{user_options} {os.environ.get('SPARK_SUBMIT_OPTS', '')}"
    if os.environ.get(OFF) == "off" or any(o in mine for o in _USER_CDS):
        return ""
    archive = path()
    return options_for(archive) if archive.is_file() and " " not in str(archive) else ""


def options_for(archive: Path) -> str:
    """JVM options that use ``archive`` where the JVM can, silently (none where it cannot)."""
    return f"-XX:SharedArchiveFile={archive} {_QUIET}"


def build(warm_up: str, force: bool = False) -> Path:
    """Build the archive (unless it exists and not ``force``) from a run of the module
    ``warm_up`` (``python -m``); returns its path, and removes the archives of other Java,
    Spark or class path versions beside it. Raises RuntimeError with the child's output if the
    warm-up run failed (an archive that was there stays)."""
    archive = path()
    if archive.is_file() and not force:
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.{os.getpid()}")
    env = dict(os.environ)  # the dump option keeps the archive out of the build's own driver
    env["SPARK_SUBMIT_OPTS"] = (f"{env.get('SPARK_SUBMIT_OPTS', '')} "
                                f"-XX:ArchiveClassesAtExit={tmp}").strip()
    proc = subprocess.run([sys.executable, "-m", warm_up], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"the warm-up run failed (exit {proc.returncode}):\n"
                           f"{(proc.stdout + proc.stderr)[-4000:]}")
    os.replace(tmp, archive)
    for other in archive.parent.glob("spark-driver-*.jsa"):
        if other != archive:
            other.unlink(missing_ok=True)
    return archive

