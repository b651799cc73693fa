"""PySpark's Python worker daemon, importing the installed pyspark instead of Spark's zip of it.

Spark starts its Python workers with ``<SPARK_HOME>/python/lib/pyspark.zip`` first on their
path. Python keeps no bytecode for a zip: every new worker compiles the pyspark modules it
imports from source (``pyspark.worker`` and the Arrow and streaming modules: ~1.2 s of CPU a
worker, measured), and a stream run starts several workers (a task's chained Python operators
each have their own). Where that zip is the installed pyspark's own (a pip-installed pyspark:
the same files), the installed package is the same code with its bytecode cache, so it goes
first. Anything else (a Spark distribution under another SPARK_HOME) keeps Spark's path.

Spark runs it as ``python -m operators_lib.worker_daemon <worker module>`` where
``spark.python.daemon.module`` names it (spark.py sets that for local masters only: cluster
executors need not have twinflow installed). Nothing else changes: the daemon is pyspark's
(``pyspark.daemon.manager``), and it imports nothing more before it forks its workers.
"""

from __future__ import annotations

import sys
from importlib.machinery import PathFinder
from pathlib import Path


def prefer_installed_pyspark(path: list[str]) -> list[str]:
    """``path`` with Spark's pyspark and py4j zips last when they lie inside the pyspark
    package that the rest of ``path`` finds (the same code)."""
    zips = [p for p in path if p.endswith(".zip") and Path(p).parent.parts[-3:] ==
            ("pyspark", "python", "lib")]
    rest = [p for p in path if p not in zips]
    spec = PathFinder.find_spec("pyspark", rest)
    if not zips or spec is None or spec.origin is None:
        return path
    package = Path(spec.origin).parent
    if any(Path(z).parent != package / "python" / "lib" for z in zips):
        return path
    return rest + zips


def main() -> None:
    sys.path[:] = prefer_installed_pyspark(sys.path)
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
