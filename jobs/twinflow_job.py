"""spark-submit entry point for scheduled (incremental) runs of one configured query.

    spark-submit jobs/twinflow_job.py stream-increment --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py batch-parity     --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py measure-skew     --config Q.json --run-dir DIR
    spark-submit jobs/twinflow_job.py audit            --config Q.json --run-dir DIR

measure-skew writes DIR/skew.json: the TopN's partition skew over the recent input
(operators_lib/hotspot.py), which the hotspot DAG turns into a split factor. audit writes
DIR/audit.json: everything the query's stream emitted against batch over all retained input
(operators_lib/incremental.audit).

Exit codes as for ``twinflow run``: 1 parity failed, 2 bad input / unsupported SQL, 3 damaged
state or a failed engine.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from operators_lib.errors import TwinflowError
from operators_lib.hotspot import measure_skew
from operators_lib.incremental import QueryConfig, audit, batch_parity, stream_increment
from operators_lib.locations import check_shared, local_path
from operators_lib.paths import home, state_dir


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="twinflow_job", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["stream-increment", "batch-parity", "measure-skew", "audit"])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--run-dir", type=Path, required=True)
    args = ap.parse_args(argv)
    from operators_lib.spark import engine_failures, get_spark

    try:
        cfg = QueryConfig.load(args.config)
        local_path(home(), "TWINFLOW_HOME")
        local_path(args.run_dir, "--run-dir")
        spark = get_spark(app=f"twinflow-{cfg.name}-{args.step}")
        check_shared(spark, home())
        state = state_dir(cfg.name)
        with engine_failures():
            if args.step == "measure-skew":
                report = asdict(measure_skew(cfg, spark, state))
                args.run_dir.mkdir(parents=True, exist_ok=True)
                (args.run_dir / "skew.json").write_text(json.dumps(report, indent=2))
            else:
                step = {"stream-increment": stream_increment, "batch-parity": batch_parity,
                        "audit": audit}[args.step]
                report = step(cfg, spark, state, args.run_dir)
    except TwinflowError as e:
        print(f"twinflow_job: error: {e}", file=sys.stderr)
        return e.exit_code
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
