"""Where the suite's CPU goes, per test: wall time (``--durations``) hides it on two busy cores,
and the JVMs a test starts (the session's work, spark-submit, `twinflow run`, a cluster) are no
children that ``time`` counts.

    python -m tests.suite_profile DIR -- -n 4 --dist worksteal   # runs pytest, then reports

DIR gets report.txt and tests.tsv (every test's CPU seconds, costliest first).

Every 0.25 s the CPU time of every process is sampled from /proc; each process's CPU is
charged to the test its pytest-xdist worker (its ancestor) ran at that moment, split into
the worker itself, JVMs (``java``) and other processes (Python drivers and workers, Airflow);
``JVMs`` counts the JVMs first seen in each file's tests (a session JVM in the first file that
used it): each new one costs seconds of CPU to start.
A process that lives less than a sample is missed; processes of no worker are listed apart.
"""

from __future__ import annotations

import bisect
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

LOG = "TWINFLOW_SUITE_PROFILE"  # the tests' start/end log, written by each process's hooks


def _log(kind: str, nodeid: str) -> None:
    path = os.environ.get(LOG)
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps([kind, os.getpid(), nodeid, time.time()]) + "\n")


def pytest_runtest_logstart(nodeid: str, location: object) -> None:
    _log("start", nodeid)


def pytest_runtest_logfinish(nodeid: str, location: object) -> None:
    _log("end", nodeid)


def _processes() -> dict[int, tuple[int, float, str]]:
    """pid -> (parent pid, CPU seconds so far, command name)."""
    hz = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        end = stat.rfind(")")
        f = stat[end + 2:].split()
        out[int(pid)] = int(f[1]), (int(f[11]) + int(f[12])) / hz, stat[stat.find("(") + 1:end]
    return out


def _sample(proc: subprocess.Popen) -> list[tuple[float, dict, dict]]:
    """(time, pid -> CPU seconds since the last sample, pid -> (parent, name)) until ``proc``
    ends."""
    samples, last = [], _processes()
    while proc.poll() is None:
        time.sleep(0.25)
        now = _processes()
        delta = {p: cpu - last.get(p, (0, 0.0))[1] for p, (_, cpu, _) in now.items()}
        samples.append((time.time(), {p: d for p, d in delta.items() if d > 0},
                        {p: (pp, name) for p, (pp, _, name) in now.items()}))
        last = now
    return samples


def report(log: Path, samples: list[tuple[float, dict, dict]],
           top: int = 40) -> tuple[str, collections.Counter]:
    """The report's text and the CPU seconds of every test."""
    runs: dict[int, list[tuple[float, float, str]]] = collections.defaultdict(list)
    started = {}
    for kind, pid, node, t in map(json.loads, log.read_text().splitlines()):
        if kind == "start":
            started[pid, node] = t
        elif (pid, node) in started:
            runs[pid].append((started.pop((pid, node)), t, node))
    if len(runs) > 1:  # xdist's controller logs every test too: not a worker
        del runs[max(runs, key=lambda w: len(runs[w]))]
    for v in runs.values():
        v.sort()
    starts = {w: [s for s, _, _ in v] for w, v in runs.items()}
    per_test: collections.Counter = collections.Counter()
    per_file: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    elsewhere: collections.Counter = collections.Counter()
    jvms: dict[str, set[int]] = collections.defaultdict(set)
    seen: set[int] = set()
    for t, delta, procs in samples:
        for pid, cpu in delta.items():
            worker, p = None, pid
            for _ in range(40):  # up the parents to a worker
                if p in runs:
                    worker = p
                    break
                p = procs.get(p, (0, ""))[0]
                if not p:
                    break
            name = procs.get(pid, (0, "?"))[1]
            if worker is None:
                elsewhere[name] += cpu
                continue
            i = bisect.bisect_right(starts[worker], t) - 1
            node = runs[worker][i][2] if i >= 0 and runs[worker][i][1] >= t - 0.5 else "(between)"
            per_test[node] += cpu
            file = node.split("::")[0]
            per_file[file]["worker" if pid == worker else
                           "java" if name == "java" else "other"] += cpu
            if name == "java" and pid not in seen:
                seen.add(pid)
                jvms[file].add(pid)
    total = sum(per_test.values())
    lines = [f"CPU charged to tests: {total:.0f} s; to processes of no worker: "
             f"{sum(elsewhere.values()):.0f} s", "", f"{'CPU s':>8}  {'worker':>7}  "
             f"{'java':>7}  {'other':>7}  {'JVMs':>4}  file"]
    for f, c in sorted(per_file.items(), key=lambda kv: -sum(kv[1].values())):
        lines.append(f"{sum(c.values()):8.1f}  {c['worker']:7.1f}  {c['java']:7.1f}  "
                     f"{c['other']:7.1f}  {len(jvms[f]):4d}  {f}")
    lines += ["", f"the {top} tests that cost most:"]
    lines += [f"{cpu:8.1f}  {node}" for node, cpu in per_test.most_common(top)]
    return "\n".join(lines), per_test


def main() -> None:
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    log = out / "tests.jsonl"
    log.unlink(missing_ok=True)
    extra = args[2:] if args[1:2] == ["--"] else args[1:]
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "tests.suite_profile",
                             *extra], env={**os.environ, LOG: str(log)})
    text, per_test = report(log, _sample(proc))
    (out / "report.txt").write_text(text + "\n")
    (out / "tests.tsv").write_text("".join(f"{cpu:.1f}\t{node}\n"
                                           for node, cpu in per_test.most_common()))
    print(text)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
