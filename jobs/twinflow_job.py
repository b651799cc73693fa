"""spark-submit entry point for scheduled (incremental) runs of one configured query.

    spark-submit jobs/twinflow_job.py increment        --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py measure-skew     --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py audit            --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py compact          --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py verify           --config Q.json --run-dir DIR --snapshot ID
    spark-submit jobs/twinflow_job.py backfill         --config Q.json --run-dir DIR \
                                                       --start KEY --end KEY

increment: a scheduled run's stream step (stage what arrived, stream it from the checkpoint,
materialize, record) and then, in the same driver, its parity step (the interval's emitted rows
against batch) and its quality gate (the result validated as a Spark DataFrame by its Great
Expectations suite, DIR/validation.json: operators_lib/runs/gating.py; the DAG's validate task
reads the verdict): one Spark application per run, as a cluster schedules it once. The reports
are printed in turn; a failed parity (exit 1) comes after the stream's state is committed, so a
retry of the task finds the interval streamed and checks it again.
measure-skew writes DIR/skew.json: the TopN's partition skew over the recent input
(operators_lib/runs/hotspot.py), which the hotspot DAG turns into a split factor. audit writes
DIR/audit.json: everything the query's stream emitted against batch over all retained input
(operators_lib/runs/checking.py). compact, verify: the state commands of ``twinflow state``
on the query's state (operators_lib/runs/compaction.py, runs/verify.py), their JSON in
DIR/compact.json, DIR/verify.json. backfill: DIR/<interval>/ for each recorded interval in
[start, end] (operators_lib/runs/backfill.py), each gated as an increment's run is.

Exit codes as for ``twinflow run``: 1 parity failed, 2 bad input / unsupported SQL, 3 damaged
state or a failed engine.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from operators_lib.engine.locations import check_shared
from operators_lib.engine.stores import store_of
from operators_lib.errors import TwinflowError, state_check_failed
from operators_lib.io import storage
from operators_lib.io.output import write_json
from operators_lib.paths import append_audit, home, state_dir
from operators_lib.runs.compaction import compact
from operators_lib.runs.gating import gate
from operators_lib.runs.hotspot import measure_skew
from operators_lib.runs.lifecycle import run
from operators_lib.runs.query_config import QueryConfig
from operators_lib.runs.spec import RunSpec, Steps
from operators_lib.runs.verify import verify

# The steps that are runs (runs/lifecycle.py), each the lifecycle's steps in turn.
RUNS = {"increment": (Steps.STREAM, Steps.PARITY), "audit": (Steps.AUDIT,),
        "backfill": (Steps.BACKFILL,)}
# The runs whose results are then gated here (runs/gating.py): the run directories.
GATED = {"increment": lambda run_dir: [run_dir],
         "backfill": lambda run_dir: sorted(p for p in run_dir.iterdir() if p.is_dir())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="twinflow_job", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["increment", "measure-skew", "audit", "compact", "verify",
                                     "backfill"])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--run-dir", required=True, help="a local path or an s3a:// or hdfs:// URI")
    ap.add_argument("--snapshot", help="verify: the snapshot's id")
    ap.add_argument("--start", help="backfill: the first interval (its run key)")
    ap.add_argument("--end", help="backfill: the last interval (its run key)")
    args = ap.parse_args(argv)
    for step, needed in (("verify", ("snapshot",)), ("backfill", ("start", "end"))):
        if args.step == step and not all(getattr(args, n) for n in needed):
            ap.error(f"{step} needs " + " and ".join(f"--{n}" for n in needed))
    from operators_lib.engine.spark import engine_failures, get_spark

    try:
        name = QueryConfig.read(args.config).name
        spark = get_spark(app=f"twinflow-{name}-{args.step}")
        storage.use(store_of(spark))  # $TWINFLOW_HOME reached as the session reaches it
        cfg = QueryConfig.load(args.config)
        if storage.is_local(home()):
            check_shared(spark, home())
        run_dir = storage.reachable(storage.place(args.run_dir, "--run-dir"), "--run-dir")
        state = state_dir(cfg.name)
        with engine_failures():
            if args.step == "measure-skew":
                report = asdict(measure_skew(cfg, spark, state))
                write_json(run_dir / "skew.json", report)
            elif args.step in ("compact", "verify"):
                report = compact(spark, state) if args.step == "compact" else verify(
                    spark, state, args.snapshot)
                write_json(run_dir / f"{args.step}.json", report)
                if args.step == "compact":
                    append_audit(cfg.name, {
                        "at": datetime.now(UTC).isoformat(timespec="seconds"),
                        "query": cfg.name, "action": "compact",
                        **{k: report.get(k) for k in ("micro_batch", "expired_keys", "before",
                                                      "after", "operators", "not_swept")}})
                if state_check_failed(report):
                    print(json.dumps(report, indent=2, default=str))
                    return 1
            else:
                spec = RunSpec.scheduled(cfg, state, run_dir, args.start, args.end)
                *first, last = RUNS[args.step]
                for steps in first:  # each report as its step ends
                    print(json.dumps(run(spec, spark, steps).report.as_json(), indent=2,
                                     default=str), flush=True)
                report = run(spec, spark, last).report.as_json()
                if args.step in GATED:
                    print(json.dumps(report, indent=2, default=str), flush=True)
                    report = {"gate": {d.name: gate(cfg, spark, state, d)
                                       for d in GATED[args.step](run_dir)}}
    except TwinflowError as e:
        print(f"twinflow_job: error: {e}", file=sys.stderr)
        return e.exit_code
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
