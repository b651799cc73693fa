#!/usr/bin/env bash
# Set up everything twinflow needs on a fresh Debian/Ubuntu machine, then run a command:
#   ./bootstrap.sh demo   the seed OVER queries in batch + stream with parity, a Great
#                         Expectations gate and an Airflow DAG run; prints where outputs are
#   ./bootstrap.sh test   ruff + the whole test suite
#   ./bootstrap.sh setup  only the set-up
# Creates .venv/ at the repo root with the pinned dependencies of requirements.lock.
# Installs Java 17 (and python3-venv; PostgreSQL for the tests) with apt-get when missing and
# running as root.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
PY=${PYTHON:-python3}

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap: $1 is missing; install it (e.g. sudo apt-get install -y $2) and re-run" >&2
    exit 1
  fi
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "$@" >/dev/null
}

if ! command -v "$PY" >/dev/null || ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  need_root "Python >= 3.11" "python3 python3-venv"
  apt_install python3 python3-venv
fi
if ! command -v java >/dev/null || ! java -version >/dev/null 2>&1; then
  need_root "Java 17" "openjdk-17-jre-headless"
  apt_install openjdk-17-jre-headless
fi

LOCK_HASH=$( (cat requirements.lock pyproject.toml) | sha256sum | cut -c1-16)
STAMP=.venv/.twinflow-$LOCK_HASH
if [ ! -f "$STAMP" ]; then
  if [ ! -x .venv/bin/python ]; then
    if ! "$PY" -m venv .venv 2>/dev/null; then
      need_root "python3-venv" "python3-venv"
      apt_install python3-venv
      rm -rf .venv
      "$PY" -m venv .venv
    fi
  fi
  echo "bootstrap: installing pinned dependencies into .venv (first time: ~1-2 min)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.lock
  .venv/bin/pip install -q --no-deps -e .
  rm -f .venv/.twinflow-* .venv/share/twinflow/spark-driver-*.jsa  # of the jars replaced
  touch "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"
export PYSPARK_PYTHON="$ROOT/.venv/bin/python"
# The object-store connector and Avro jars (operators_lib/engine/stores.py; first time:
# ~690 MB), before the class-data archive, which is built with them on the class path.
.venv/bin/python -m operators_lib.engine.stores
# The Spark driver's class-data archive (operators_lib/engine/jvm_archive.py): drivers then start in
# about half the time. Without it everything works, only slower.
if ! .venv/bin/python -c "import sys; from operators_lib.engine.jvm_archive import path
sys.exit(not path().is_file())"; then
  echo "bootstrap: building the Spark driver's class-data archive (first time: ~1 min)"
  .venv/bin/twinflow jvm-archive >/dev/null \
    || echo "bootstrap: warning: no class-data archive; Spark drivers start without it" >&2
fi

case "${1:-demo}" in
  setup) echo "bootstrap: ready (.venv/bin/twinflow)" ;;
  demo) shift || true; exec .venv/bin/twinflow demo "$@" ;;
  test)
    shift || true
    # The tests' real Airflow keeps its metadata in PostgreSQL (tests/airflow_server.py).
    if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
      need_root "PostgreSQL" "postgresql"
      apt_install postgresql
    fi
    .venv/bin/ruff check .
    # Four test processes on two cores: the DAG, server and CLI tests spend much of their
    # time waiting on schedulers, servers and timeouts, while the case tests keep a core busy
    # (the whole suite, minutes of pytest: 3 processes 23-25, 4 processes 19-23). The slowest 15 are
    # listed: the suite has a 15-minute budget.
    exec .venv/bin/python -m pytest -q -n 4 --dist worksteal --durations=15 "$@" ;;
  *) echo "usage: $0 {demo|test|setup}" >&2; exit 2 ;;
esac
