"""PySpark's Python worker daemon, importing the installed pyspark instead of Spark's zip of it.

Spark starts its Python workers with ``<SPARK_HOME>/python/lib/pyspark.zip`` (and py4j's zip)
first on their path. Python keeps no bytecode for a zip: every new worker compiled the pyspark
modules it imports from source (``pyspark.worker``, the Arrow and streaming modules: ~1.2 s of
CPU a worker, measured), and a stream run starts several workers (a task's chained Python
operators each have their own). Each task also re-read the zip's directory
(``importlib.invalidate_caches``, ~20 ms). Where the zips are the installed pyspark's own files
(a pip-installed pyspark: the driver runs that package and its py4j), the workers import the
installed packages, with their bytecode cache, and the zips leave the path (and the import
system's cache of finders, which ``invalidate_caches`` walks: a worker's first task re-read
each zip's directory through it, ~0.2 s). Anything else (a Spark distribution under another
SPARK_HOME) keeps Spark's path.

The daemon then imports what every worker imports (``PRELOAD``: pyspark's worker, pandas,
pyarrow, numpy and twinflow's executor-side modules, ~0.7 s once) and freezes those objects
out of the garbage collector's reach (``gc.freeze``) before it forks its workers:
- a worker no longer imports them itself when it unpickles its first task's function (~0.8 s
  of CPU per worker, measured; a stream run forks four or more);
- pyspark's daemon runs a full ``gc.collect()`` in a reused worker after each task: it walked
  those ~100,000 objects every time (~75 ms a task; 2.5 s of CPU in one OVER run of 1M rows).

Spark runs it as ``python -m operators_lib.worker_daemon <worker module>`` where
``spark.python.daemon.module`` names it (spark.py sets that for local masters only: cluster
executors need not have twinflow installed). Nothing else changes: the daemon is pyspark's
(``pyspark.daemon.manager``).
"""

from __future__ import annotations

import gc
import importlib
import sys
from importlib.machinery import PathFinder
from pathlib import Path


def without_own_zips(path: list[str]) -> list[str]:
    """``path`` without Spark's pyspark and py4j zips where they lie inside the pyspark
    package that the rest of ``path`` finds (the same code, installed)."""
    zips = [p for p in path if p.endswith(".zip") and Path(p).parent.parts[-3:] ==
            ("pyspark", "python", "lib")]
    rest = [p for p in path if p not in zips]
    spec = PathFinder.find_spec("pyspark", rest)
    if not zips or spec is None or spec.origin is None or not PathFinder.find_spec("py4j", rest):
        return path
    package = Path(spec.origin).parent
    if any(Path(z).parent != package / "python" / "lib" for z in zips):
        return path
    return rest


# What the workers import; forked workers share them, copy-on-write.
PRELOAD = ("pyspark.worker", "operators_lib.ingest", "operators_lib.stream.planner")


def main() -> None:
    kept = without_own_zips(sys.path)
    for entry in set(sys.path) - set(kept):
        sys.path_importer_cache.pop(entry, None)
    sys.path[:] = kept
    for module in PRELOAD:
        importlib.import_module(module)
    gc.freeze()
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
