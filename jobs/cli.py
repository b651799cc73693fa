"""The ``twinflow`` command line.

    twinflow run --sql FILE [--sql FILE ...] --data TABLE=PATH [--data ...] \
                 --mode {batch,stream,both} --out DIR [--rows-per-batch N] [--topn-split S]
    twinflow demo [--out DIR]
    twinflow state snapshot --out DIR [--keep N]   # DIR: a run's --out, or a query's state
    twinflow state list     --out DIR
    twinflow state rollback --out DIR --snapshot ID
    twinflow state verify   --out DIR --snapshot ID  # resume it in a scratch dir: same result?
    twinflow state compact  --out DIR              # drop the state the query's TTL expired
    twinflow state inspect  --out DIR              # per operator: keys, rows, bytes
    twinflow report --out DIR --html FILE          # the run history as a page with charts
    twinflow jvm-archive [--rebuild]   # once per machine: Spark drivers start in half the time
    twinflow dags install FOLDER       # Airflow: the installed twinflow's DAGs in its DAGs folder
    twinflow --version

Prints a line per step and a summary; what Spark, Great Expectations and Airflow print goes to
DIR/engine.log (--verbose: to the console).

``twinflow state`` and ``twinflow report`` print one JSON line (operators_lib/state/snapshots.py,
runs/verify.py, runs/compaction.py, state/inspect.py, ops/report.py); what Spark prints goes to
the state directory's engine.log.

Exit codes: 0 success (in ``both`` mode: finals equal, or every difference explained by late
rows); 1 parity failed (the diff is printed); 2 bad input or unsupported SQL; 3 internal error;
4 the machine (a full disk, a permission denied).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from jobs.console import Console, engine_output_to
from operators_lib.engine.locations import local_path
from operators_lib.errors import TwinflowError, state_check_failed

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from operators_lib.io.storage import Place


def _data_arg(text: str) -> tuple[str, Path | str]:
    """TABLE=PATH-or-URI (a URI stays a string: a Path would fold its //)."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected TABLE=PATH, got {text!r}")
    return name, path if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:", path) else Path(path)


def _conf_arg(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def version() -> str:
    """twinflow's version and the Spark and Airflow it runs with (as installed: nothing is
    imported)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    def of(name: str) -> str:
        try:
            return installed(name)
        except PackageNotFoundError:
            return "not installed"

    return (f"twinflow {of('twinflow')} (pyspark {of('pyspark')}, apache-airflow "
            f"{of('apache-airflow')}, Python {sys.version.split()[0]})")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="twinflow", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="show what Spark, its Python workers, Great Expectations and Airflow "
                         "print (default: DIR/engine.log)")
    ap.add_argument("--version", action="version", version=version())
    # --verbose also after the command; SUPPRESS keeps a flag given before it
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="as before the command")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", parents=[common],
                         help="run a query in batch, stream or both modes")
    run.add_argument("--sql", action="append", required=True, type=Path,
                     help="SQL file (repeatable; read in order)")
    run.add_argument("--data", action="append", default=[], type=_data_arg,
                     help="TABLE=PATH: a CSV file with a header, or a directory of them")
    run.add_argument("--mode", choices=["batch", "stream", "both"], default="both")
    run.add_argument("--out", required=True,
                     help="output directory: a local path, or an s3a:// or hdfs:// URI")
    run.add_argument("--rows-per-batch", type=int, default=None,
                     help="rows of every table per micro-batch (default: about 4 micro-batches, "
                          "at most 100000 rows)")
    run.add_argument("--stop-after-batches", type=int, default=None,
                     help="stream: stop after K micro-batches; the same command again resumes "
                          "from the checkpoint")
    run.add_argument("--topn-split", type=int, default=1, metavar="S",
                     help="split every TopN's partitions in S sub-partitions (a two-level "
                          "TopN with the same result) to spread a hot partition; default 1")
    run.add_argument("--master", default=None, help="Spark master (default local[2])")
    run.add_argument("--conf", action="append", default=[], type=_conf_arg,
                     metavar="KEY=VALUE",
                     help="a Spark setting (repeatable); the user's settings (this, "
                          "spark-defaults.conf) win over twinflow's defaults")
    demo = sub.add_parser("demo", parents=[common],
                          help="the seed queries in both modes, a GX gate and a DAG run")
    demo.add_argument("--out", type=Path, default=Path("runs") / "demo")
    archive = sub.add_parser("jvm-archive", parents=[common],
                             help="build the Spark driver's class-data archive (about a minute, "
                                  "once per Java, Spark and class path): drivers twinflow "
                                  "starts then start in about half the time")
    archive.add_argument("--rebuild", action="store_true", help="even if it exists")
    state = sub.add_parser("state", help="a query's state: snapshots, verification, "
                                         "compaction, inspection")
    actions = state.add_subparsers(dest="action", required=True)
    for action, text in (("snapshot", "a consistent copy at the last committed micro-batch"),
                         ("list", "the snapshots: id, batch id, time, size"),
                         ("rollback", "make a snapshot the current state"),
                         ("verify", "resume a snapshot in a scratch directory and compare its "
                                    "result with the live state's"),
                         ("compact", "drop the state the query's TTL has expired, now"),
                         ("inspect", "per operator: keys, rows, bytes; watermark; age")):
        p = actions.add_parser(action, help=text)
        p.add_argument("--out", required=True,
                       help="a `twinflow run --out` directory or a scheduled query's state "
                            "directory ($TWINFLOW_HOME/state/<query>): a local path, or an "
                            "s3a:// or hdfs:// URI")
        if action == "snapshot":
            p.add_argument("--keep", type=int, default=None, metavar="N",
                           help="then keep only the newest N snapshots")
        if action in ("rollback", "verify"):
            p.add_argument("--snapshot", required=True, metavar="ID")
        if action in ("verify", "compact", "inspect"):
            p.add_argument("--master", default=None, help="Spark master (default local[2])")
        p.add_argument("--conf", action="append", default=[], type=_conf_arg,
                       metavar="KEY=VALUE", help="a Spark setting (repeatable; without Spark "
                       "the spark.hadoop.* ones reach a store, as $HADOOP_CONF_DIR and the "
                       "AWS variables do)")
    dags = sub.add_parser("dags", help="Airflow: twinflow's DAGs in a DAGs folder")
    dags_actions = dags.add_subparsers(dest="action", required=True)
    install = dags_actions.add_parser("install", help="write FOLDER/twinflow.py, the DAG file "
                                      "of the installed twinflow's DAGs")
    install.add_argument("folder", type=Path, help="Airflow's DAGs folder ([core] dags_folder)")
    report = sub.add_parser("report", help="the query's run history as an HTML page with "
                                           "charts (offline)")
    report.add_argument("--out", required=True,
                        help="a `twinflow run --out` directory or a scheduled query's state "
                             "directory (a local path, or an s3a:// or hdfs:// URI)")
    report.add_argument("--conf", action="append", default=[], type=_conf_arg,
                        metavar="KEY=VALUE", help="spark.hadoop.* settings that reach a store")
    report.add_argument("--html", type=Path, required=True, help="the page to write")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:  # before anything is written there
        if args.command in ("run", "state", "report"):
            args.out = _place(args.out)
        elif args.command == "demo":
            local_path(args.out, "--out")
    except TwinflowError as e:
        print(f"twinflow: error: {e}", file=sys.stderr)
        return e.exit_code
    if args.command == "demo":
        from jobs.demo import main as demo

        return demo(args.out, args.verbose)
    if args.command == "jvm-archive":
        return _jvm_archive(args.rebuild)
    if args.command == "dags":
        return _dags_install(args.folder)
    if args.command in ("state", "report"):
        return _state(args)
    local = isinstance(args.out, Path)
    log = None if args.verbose else (args.out if local else _scratch()) / "engine.log"
    created = local and not args.out.exists()
    with engine_output_to(log) as (out, err):
        code = _run(args, Console(out, err, progress=not args.verbose), log)
    if code == TwinflowError.exit_code and log is not None:
        _discard(log, args.out if created else None)  # bad input: nothing written
    return code


def _run(args: argparse.Namespace, console: Console, log: Path | None) -> int:
    from jobs.run_output import RunProgress, summary
    from operators_lib.engine.spark import get_spark
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec, Steps

    def start_spark() -> SparkSession:  # once the run's arguments are checked
        console.activity("spark", "starting")
        spark = get_spark(args.master, conf=dict(args.conf))
        console.activity("ingest", "reading the SQL and the input")
        return spark

    spec = RunSpec.bounded_run(args.sql, dict(args.data), args.mode, args.out,
                               args.rows_per_batch, args.stop_after_batches, args.topn_split)
    try:
        with console.ticking():
            result = run(spec, start_spark, Steps.RUN, RunProgress(console, args.mode))
    except TwinflowError as e:
        console.error(f"twinflow: error: {e}")
        return e.exit_code
    except Exception:  # a bug or an engine failure: not to be mistaken for a parity failure
        console.error(traceback.format_exc().rstrip())
        console.error("twinflow: internal error (exit 3); please report it with the trace above"
                      + (f" and {log}" if log else ""))
        return 3
    if result.message:
        console.error(result.message)
    summary(console, result.report, args.out, log, result.exit_code)
    return result.exit_code


def _state(args: argparse.Namespace) -> int:
    from operators_lib.io import storage
    from operators_lib.io.hadoop_conf import settings, store_from
    from operators_lib.state import snapshots

    try:
        storage.use(store_from(settings(dict(args.conf)).get))  # Spark's, where it starts
        state = snapshots.state_dir(storage.reachable(storage.bound(args.out, storage.store()),
                                                      "--out"))
        if args.command == "report":
            from operators_lib.ops.report import render

            out = render(state, args.html)
        elif args.action == "snapshot":
            out = snapshots.snapshot(state, args.keep)
        elif args.action == "list":
            out = {"state": str(state), "snapshots": snapshots.list_snapshots(state)}
        elif args.action == "rollback":
            out = snapshots.rollback(state, args.snapshot)
        else:
            out = _with_spark(args, state)
    except TwinflowError as e:
        print(f"twinflow: error: {e}", file=sys.stderr)
        return e.exit_code
    except Exception:  # a bug or an engine failure
        traceback.print_exc()
        print("twinflow: internal error (exit 3); please report it with the trace above",
              file=sys.stderr)
        return 3
    print(json.dumps(out))
    return 1 if state_check_failed(out) else 0


def _with_spark(args: argparse.Namespace, state: Place) -> dict:
    """The state commands that run Spark jobs; Spark's output goes to the state's engine.log
    (a local file: the temporary directory's for a state on a store; --verbose: the
    console)."""
    from operators_lib.engine.spark import engine_failures, get_spark
    from operators_lib.engine.stores import store_of
    from operators_lib.io import storage

    log = (state if isinstance(state, Path) else _scratch()) / "engine.log"
    with engine_output_to(None if args.verbose else log), engine_failures():
        spark = get_spark(args.master, conf=dict(args.conf))
        storage.use(store_of(spark))
        state = storage.bound(state, storage.store())
        if args.action == "inspect":
            from operators_lib.state.inspect import inspect

            return inspect(spark, state)
        if args.action == "compact":
            from operators_lib.runs.compaction import compact

            return compact(spark, state)
        from operators_lib.runs.verify import verify

        return verify(spark, state, args.snapshot)


def _jvm_archive(rebuild: bool) -> int:
    from operators_lib.engine import jvm_archive

    try:
        print(f"twinflow: JVM class-data archive {jvm_archive.build('jobs.warm_up', rebuild)}")
    except RuntimeError as e:
        print(f"twinflow: error: {e}", file=sys.stderr)
        return 3
    return 0


def _dags_install(folder: Path) -> int:
    from jobs.dag_files import install

    try:
        print(f"twinflow: DAG file {install(folder)}")
    except TwinflowError as e:
        print(f"twinflow: error: {e}", file=sys.stderr)
        return e.exit_code
    return 0


def _place(out: str) -> Place:
    """``twinflow run --out``: a local path, or a place on a store (io/storage.py; the
    session's settings reach it once Spark has started)."""
    from operators_lib.io import storage, uris

    where = uris.location(out, "--out")
    return where if isinstance(where, Path) else storage.place(where, "--out")


def _scratch() -> Path:
    """Where the engine's log goes when --out is on a store (the JVM writes it through its
    file descriptors: a local file)."""
    scratch = Path(tempfile.gettempdir()) / f"twinflow-{os.getpid()}"
    scratch.mkdir(exist_ok=True)
    return scratch


def _discard(log: Path, created: Path | None) -> None:
    log.unlink(missing_ok=True)
    if created is not None and not any(created.iterdir()):
        created.rmdir()


if __name__ == "__main__":
    sys.exit(main())
