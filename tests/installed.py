"""twinflow installed as a user installs it: a virtualenv that already holds an Airflow
deployment's packages (Airflow, its Spark and PostgreSQL providers, at the versions the lock
pins), into which ``pip install`` puts the wheel built from this checkout. The real-Airflow
test (tests/test_state_dags.py) runs its Airflow and Spark steps from it."""

from __future__ import annotations

import base64
import csv
import hashlib
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
# What the user's environment had before twinflow came (Airflow sending its metrics to StatsD).
DEPLOYMENT = ["apache-airflow[statsd]", "apache-airflow-providers-apache-spark",
              "apache-airflow-providers-postgres"]


def _run(*args: str | Path) -> str:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def install(directory: Path) -> Path:
    """The environment's Python, once the wheel is in it."""
    wheels = directory / "wheels"
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, REPO)
    (wheel,) = wheels.glob("twinflow-*.whl")
    # pyspark is published as source only: pip's wheel cache has the wheel bootstrap.sh built
    pyspark = next(line for line in LOCK.read_text().splitlines() if line.startswith("pyspark=="))
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, pyspark)
    venv = directory / "venv"
    # uv builds the deployment (fast, from its cache); pip installs twinflow, as a user would
    uv = Path(sys.executable).parent / "uv"
    _run(uv, "venv", "-q", "--seed", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    _run(uv, "pip", "install", "-q", "--python", python, "-c", LOCK, "--find-links", wheels,
         *DEPLOYMENT)
    # (no .pyc files written ahead: half of pip's time; imports write those they need)
    _run(python, "-m", "pip", "install", "-q", "--no-compile", "-c", LOCK, wheel)
    return python


def changed_files(python: Path, distribution: str) -> list[str]:
    """The files of an installed distribution whose content is not what its RECORD says."""
    location = _run(python, "-c", f"import importlib.metadata as m; d = m.distribution("
                    f"{distribution!r}); print(d.locate_file(''))").strip()
    record = _run(python, "-c", f"import importlib.metadata as m; print(m.distribution("
                  f"{distribution!r}).read_text('RECORD'))")
    changed = []
    for row in csv.reader(record.splitlines()):
        if len(row) != 3 or not row[1]:  # a blank line; RECORD itself, .pyc files: no digest
            continue
        path, digest, _ = row
        algorithm, _, expected = digest.partition("=")
        try:
            data = (Path(location) / path).read_bytes()
        except FileNotFoundError:
            changed.append(path)
            continue
        actual = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=")
        if actual.decode() != expected:
            changed.append(path)
    return changed
