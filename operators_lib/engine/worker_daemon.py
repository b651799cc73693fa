"""How Spark's Python processes start on a local master: the installed pyspark instead of
Spark's zips of it, and the daemon's workers forked with what they import already loaded.

**The launcher** (``python_launcher``). Spark starts every Python process (the workers' daemon,
and the driver-side worker that transformWithState starts before each stream query) with
``<SPARK_HOME>/python/lib/pyspark.zip`` and py4j's zip first on PYTHONPATH. Python keeps no
bytecode for a zip: each such process compiled the pyspark modules it imports from source
(~1 s; a stream query's start waited for it). Where those zips are the installed pyspark's own
files (a pip-installed pyspark: the driver runs that package and its py4j), twinflow's
sessions run their Python processes through a launcher, a shell script that removes the zips
from the front of PYTHONPATH and runs this interpreter: the processes import the installed
packages, with their bytecode cache. Anything else (a Spark distribution under another
SPARK_HOME, a PYSPARK_PYTHON of the user's) keeps Spark's way.

**The daemon** (``main``). It imports what every worker imports (``PRELOAD``: pyspark's
worker, pandas, pyarrow, numpy and twinflow's executor-side modules, ~0.7 s once) and freezes
those objects out of the garbage collector's reach (``gc.freeze``) before it forks its workers:
- a worker no longer imports them itself when it unpickles its first task's function (~0.8 s
  of CPU per worker, measured; a stream run forks four or more);
- pyspark's daemon runs a full ``gc.collect()`` in a reused worker after each task: it walked
  those ~100,000 objects every time (~75 ms a task; 2.5 s of CPU in one OVER run of 1M rows).

Spark runs the daemon as ``python -m operators_lib.engine.worker_daemon <worker module>`` where
``spark.python.daemon.module`` names it. spark.py sets both for local masters only: cluster
executors need not have twinflow installed. The daemon itself is pyspark's
(``pyspark.daemon.manager``).
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import os
import shlex
import sys
from importlib.machinery import PathFinder
from pathlib import Path

# What the workers import; forked workers share them, copy-on-write.
PRELOAD = ("pyspark.worker", "operators_lib.io.ingest", "operators_lib.stream.planner")


def own_zips(spark_python_path: str, path: list[str]) -> str | None:
    """The leading entries of Spark's Python path (``PythonUtils.sparkPythonPath``: the zips,
    then a jar) that are the pyspark and py4j zips inside the installed pyspark package that
    ``path`` (an interpreter's sys.path) finds, joined as they are; None if there are none."""
    entries = spark_python_path.split(os.pathsep)
    zips = []
    for entry in entries:
        if not entry.endswith(".zip"):
            break
        zips.append(entry)
    rest = [p for p in path if p not in zips]  # a spark-submitted driver has them too
    pyspark = PathFinder.find_spec("pyspark", rest)
    if not zips or pyspark is None or pyspark.origin is None or \
            not PathFinder.find_spec("py4j", rest):
        return None
    lib = Path(pyspark.origin).parent / "python" / "lib"
    if any(Path(z).resolve().parent != lib.resolve() for z in zips):
        return None
    return os.pathsep.join(zips)


def python_launcher(spark_python_path: str, python: str, directory: Path) -> Path | None:
    """A launcher of ``python`` (module docstring) in ``directory``, written once; None where
    Spark's zips are not the installed pyspark's (``own_zips``) or it cannot be written."""
    zips = own_zips(spark_python_path, sys.path)
    if zips is None:
        return None
    script = (
        "#!/bin/sh\n"
        "# twinflow (operators_lib/engine/worker_daemon.py): Spark's Python processes import the\n"
        "# installed pyspark, not Spark's zips of it.\n"
        f"zips={shlex.quote(zips)}\n"
        'case "$PYTHONPATH" in "$zips"|"$zips":*)\n'
        '  PYTHONPATH=${PYTHONPATH#"$zips"}; PYTHONPATH=${PYTHONPATH#:}; export PYTHONPATH;;\n'
        "esac\n"
        f'exec {shlex.quote(python)} "$@"\n')
    path = directory / f"python-{hashlib.sha256(script.encode()).hexdigest()[:16]}"
    if not path.exists():
        from operators_lib.io.output import replacing

        try:
            with replacing([(path, None)], mode=0o755) as (out,):
                out.write(script.encode())
        except OSError:
            return None
    return path


def main() -> None:
    for module in PRELOAD:
        importlib.import_module(module)
    gc.freeze()
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
