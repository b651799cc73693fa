"""Hotspot management for scheduled TopN queries: measure partition skew, choose the split
factor, and record the decision in the query's config (the DAG twinflow_hotspot_<query>).

Skew is measured on the recent input: the newest staged micro-batch files holding at most
``window_rows`` rows per table, run through the plan up to the TopN's input in batch mode, and
counted per TopN partition key (a global TopN has one partition: all rows).

The rule (documented in the README; ``choose_split``), with P = the query's parallelism (tasks
that run the TopN at once) and m = the largest partition's share of the rows:

- the hottest partition carries m x P tasks' worth of rows; while m x P <= 1 no partition is
  hotter than one task's fair share: S = 1 (single level);
- otherwise S = the smallest power of two >= 2 x m x P (headroom 2, so a split partition takes
  at most half a task), capped at ``max_split``;
- a lower S is applied only when it is at most a quarter of the current one (a small dip in
  skew does not trigger a state rebuild; powers of two mean every change is at least 2x).

Each decision appends an audit record (when, measured skew, rule, old -> new, why) to
``$TWINFLOW_HOME/audit/<query>.jsonl``; a change is also written, with that record, into the
query's config (atomically), where the next incremental run picks it up (incremental.py
rebuilds the TopN state for the new factor).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.errors import InputError
from operators_lib.incremental import QueryConfig, plan_for, staged_files
from operators_lib.paths import home
from operators_lib.plan import quote, scans
from operators_lib.topn_split import splittable

DEFAULTS = {"split": 1, "max_split": 128, "parallelism": 2, "window_rows": 1_000_000}
RULE = ("S = 1 while largest_share x parallelism <= 1, else the smallest power of two >= "
        "2 x largest_share x parallelism, at most max_split; a lower S only when <= current / 4")


def settings(cfg: QueryConfig) -> dict:
    """The query's hotspot settings (``"hotspot"`` in its config) over the defaults."""
    return {**DEFAULTS, **(cfg.extra.get("hotspot") or {})}


@dataclass
class Skew:
    rows: int  # input rows measured
    partitions: int  # distinct TopN partition keys
    largest_share: float  # rows of the largest partition / rows
    hot_keys: int  # partitions with more than 1 / parallelism of the rows
    top: list[tuple[str, int]]  # the largest partitions (key, rows)


def measure_skew(cfg: QueryConfig, spark: SparkSession, state: Path) -> Skew:
    """Rows per partition key of the query's (first) TopN over the recent staged input."""
    plan = plan_for(cfg, spark, split=1)
    ranks = splittable(plan)
    if not ranks:
        raise InputError(f"query {cfg.name}: hotspot splitting needs a TopN, and the query has "
                         "none (ROW_NUMBER / RANK / DENSE_RANK .. WHERE rownum <= N)")
    rank = ranks[0]
    limit = settings(cfg)["window_rows"]
    files = {}
    for scan in scans(plan):
        key = scan.table.name.lower()
        parts = staged_files(state, key)
        keep = max(1, math.ceil(limit / cfg.rows_per_batch))
        files[key] = parts[-keep:]
    df = batch_dataframe(spark, rank.child, files)
    keys = [F.col(quote(p)) for p in rank.partition_by] or [F.lit("(all rows)")]
    counts = df.groupBy(F.concat_ws("|", *[k.cast("string") for k in keys]).alias("k")).count()
    rows = counts.orderBy(F.col("count").desc()).collect()
    total = sum(r["count"] for r in rows)
    p = settings(cfg)["parallelism"]
    return Skew(total, len(rows), rows[0]["count"] / total if total else 0.0,
                sum(1 for r in rows if r["count"] * p > total), [(r["k"], r["count"])
                                                                   for r in rows[:5]])


def choose_split(skew: Skew, current: int, parallelism: int, max_split: int) -> tuple[int, str]:
    """The split factor for this skew, and why (see the module docstring)."""
    load = skew.largest_share * parallelism
    if skew.rows == 0:
        return current, "no recent input: keep the current factor"
    if load <= 1:
        wanted, why = 1, (f"the largest partition has {skew.largest_share:.1%} of the rows, at "
                          f"most one task's share at parallelism {parallelism}")
    else:
        wanted = min(max_split, 1 << math.ceil(math.log2(2 * load)))
        why = (f"the largest partition has {skew.largest_share:.1%} of the rows = {load:.2f} "
               f"tasks' worth at parallelism {parallelism}")
    if wanted < current and wanted * 4 > current:
        return current, why + f"; {wanted} is not below a quarter of {current}: keep {current}"
    return wanted, why


def decide(cfg_path: Path, skew: Skew, now: datetime | None = None) -> dict:
    """Apply the rule to a measured skew: audit it, and write a changed factor into the
    query's config file. Returns the audit record."""
    cfg = QueryConfig.load(cfg_path)
    opts = settings(cfg)
    old = int(opts["split"])
    new, why = choose_split(skew, old, int(opts["parallelism"]), int(opts["max_split"]))
    record = {"at": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
              "query": cfg.name, "old_split": old, "new_split": new, "changed": new != old,
              "reason": why, "rule": RULE, "parallelism": opts["parallelism"],
              "skew": asdict(skew)}
    audit = home() / "audit" / f"{cfg.name}.jsonl"
    audit.parent.mkdir(parents=True, exist_ok=True)
    with open(audit, "a") as fh:
        fh.write(json.dumps(record) + "\n")
    if new != old:
        raw = json.loads(cfg_path.read_text())
        raw["hotspot"] = {**(raw.get("hotspot") or {}), "split": new,
                          "last_change": {k: record[k] for k in (
                              "at", "old_split", "new_split", "reason")}}
        tmp = cfg_path.with_name(f".{cfg_path.name}.tmp")
        tmp.write_text(json.dumps(raw, indent=2) + "\n")
        os.replace(tmp, cfg_path)
    return record
