"""The ``twinflow`` command line.

    twinflow run --sql FILE [--sql FILE ...] --data TABLE=PATH [--data ...] \
                 --mode {batch,stream,both} --out DIR [--rows-per-batch N] [--topn-split S]

Exit codes: 0 success (in ``both`` mode: finals equal, or every difference explained by late
rows); 1 parity failed (the diff is printed); 2 bad input or unsupported SQL; 3 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from operators_lib.errors import TwinflowError


def _data_arg(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected TABLE=PATH, got {text!r}")
    return name, Path(path)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="twinflow", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a query in batch, stream or both modes")
    run.add_argument("--sql", action="append", required=True, type=Path,
                     help="SQL file (repeatable; read in order)")
    run.add_argument("--data", action="append", default=[], type=_data_arg,
                     help="TABLE=PATH: a CSV file with a header, or a directory of them")
    run.add_argument("--mode", choices=["batch", "stream", "both"], default="both")
    run.add_argument("--out", type=Path, required=True, help="output directory")
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
    demo = sub.add_parser("demo", help="the seed queries in both modes, a GX gate and a DAG run")
    demo.add_argument("--out", type=Path, default=Path("runs") / "demo")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from jobs.demo import main as demo

        return demo(args.out)
    from operators_lib.pipeline import RunConfig, run
    from operators_lib.spark import get_spark

    data = dict(args.data)
    cfg = RunConfig(args.sql, data, args.mode, args.out, args.rows_per_batch,
                    args.stop_after_batches, args.topn_split)
    try:
        spark = get_spark(args.master)
        result = run(cfg, spark)
    except TwinflowError as e:
        print(f"twinflow: error: {e}", file=sys.stderr)
        return e.exit_code
    except Exception:  # a bug or an engine failure: not to be mistaken for a parity failure
        traceback.print_exc()
        print("twinflow: internal error (exit 3); please report it with the trace above",
              file=sys.stderr)
        return 3
    report = result.report
    for warning in report.get("warnings", []):
        print(f"twinflow: warning: {warning}", file=sys.stderr)
    summary = {k: report.get(k) for k in ("parity", "late_rows", "rejected_rows", "timings_s")}
    print(json.dumps(summary, indent=2, default=str))
    print(f"outputs: {args.out}/ (report.json, batch.csv, changelog.csv, stream.csv, late.csv, "
          "rejected.csv)")
    if result.message:
        print(result.message, file=sys.stderr)
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
