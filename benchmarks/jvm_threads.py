"""Where a warm session's JVM spends its CPU on small runs: corpus cases run as the tests run
them, CPU per JVM thread (Linux /proc) before and after.

    .venv/bin/python benchmarks/jvm_threads.py [--cases 12] [--family join/ --family group/]
        [--conf spark.sql.codegen.factoryMode=NO_CODEGEN ...]

Run it with the JVM options to compare in SPARK_SUBMIT_OPTS (the tests': C1 and the serial GC,
``tests/cluster.py``). Prints the wall time, the JVM's CPU, the driver's and the Python
workers' CPU, and the busiest thread groups.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from operators_lib.engine.spark import get_spark  # noqa: E402
from tests.caselib import all_cases  # noqa: E402


def thread_cpu(pid: int) -> Counter:
    """CPU seconds per thread name (digits folded: ``Executor task launch worker-N``)."""
    out: Counter = Counter()
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        out[re.sub(r"\d+", "N", name)] += (int(fields[11]) + int(fields[12])) / tick
    return out


def python_cpu() -> tuple[float, float]:
    """(this process's CPU, its Python workers' CPU) in seconds."""
    me = psutil.Process()
    workers = [c for c in me.children(recursive=True) if "java" not in c.name()]
    own = me.cpu_times()
    return own.user + own.system, sum(c.cpu_times().user + c.cpu_times().system
                                      for c in workers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=12)
    ap.add_argument("--family", action="append", default=None)
    ap.add_argument("--conf", action="append", default=[], help="k=v for the session")
    args = ap.parse_args()
    families = tuple(args.family or ["join/", "group/"])
    cases = [c for c in all_cases() if c.id.startswith(families)][:args.cases]
    spark = get_spark("local[2]", app="jvm-threads",
                      conf=dict(kv.split("=", 1) for kv in args.conf))
    [jvm] = [c for c in psutil.Process().children(recursive=True) if "java" in c.name()]

    def run_all(which):
        for case in which:
            with tempfile.TemporaryDirectory() as d:
                case.run(spark, Path(d), "both", rows_per_batch=2, harness=True)

    run_all(cases[:1])  # warm-up
    threads, jvm_cpu, py = thread_cpu(jvm.pid), jvm.cpu_times(), python_cpu()
    t0 = time.perf_counter()
    run_all(cases)
    wall = time.perf_counter() - t0
    after, jvm_after, py_after = thread_cpu(jvm.pid), jvm.cpu_times(), python_cpu()
    used = (jvm_after.user + jvm_after.system) - (jvm_cpu.user + jvm_cpu.system)
    print(f"{len(cases)} cases: wall {wall:.1f} s, JVM CPU {used:.1f} s, driver Python "
          f"{py_after[0] - py[0]:.1f} s, Python workers {py_after[1] - py[1]:.1f} s")
    for name, seconds in (after - threads).most_common(10):
        print(f"  {seconds:6.2f} s  {name}")
    spark.stop()


if __name__ == "__main__":
    main()
