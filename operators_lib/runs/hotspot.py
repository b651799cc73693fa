"""Hotspot management for scheduled TopN queries: measure partition skew, choose the split
factor, and record the decision beside the query's config (the DAG twinflow_hotspot_<query>).

Skew is measured on the recent input: the newest staged micro-batch files holding at most
``window_rows`` rows per table, run through the plan up to the TopN's input in batch mode, and
counted per TopN partition key (a global TopN has one partition: all rows).

The rule (documented in the README; ``choose_split``), with P = the query's parallelism (tasks
that run the TopN at once) and m = the largest partition's share of the rows:

- the hottest partition carries load = m x P tasks' worth of rows. It needs S = 1 (single
  level) while load <= 1 (no partition is hotter than one task's fair share), otherwise the
  smallest power of two >= 2 x load (headroom 2: a sub-partition takes at most half a task),
  capped at ``max_split``;
- S is raised as soon as the load needs more; it is lowered only when twice the measured load
  would need less, and then to what twice the load needs (hysteresis: a small dip in skew does
  not trigger a state rebuild, nor does the next small rise).

Each decision appends an audit record (when, measured skew, rule, old -> new, why) to
``$TWINFLOW_HOME/audit/<query>/`` (a file per record); a change is also written, with that
record, to
``$TWINFLOW_HOME/config/<query>.json`` (atomically; never into the DAG folder), which
``QueryConfig.load`` lays over the query's config: the next incremental run picks it up
(runs/binding.py rebuilds the TopN state for the new factor).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from operators_lib.batch import batch_dataframe
from operators_lib.errors import InputError
from operators_lib.io.output import write_json
from operators_lib.paths import append_audit, chosen_settings
from operators_lib.plan import quote, scans
from operators_lib.runs.lifecycle import plan_for
from operators_lib.runs.query_config import (
    Chosen,
    ChosenHotspot,
    Hotspot,
    LastChange,
    QueryConfig,
)
from operators_lib.sql import load_script
from operators_lib.state.lifecycle import staged_files
from operators_lib.topn_split import splittable

RULE = ("load = largest_share x parallelism; needed(load) = 1 if load <= 1, else the smallest "
        "power of two >= 2 x load, at most max_split; raise to needed(load), lower only to "
        "needed(2 x load) when that is below the current S")


def settings(cfg: QueryConfig) -> Hotspot:
    """The query's hotspot settings (``"hotspot"`` in its config; the model's defaults without
    it)."""
    return cfg.hotspot or Hotspot()


@dataclass
class Skew:
    rows: int  # input rows measured
    partitions: int  # distinct TopN partition keys
    largest_share: float  # rows of the largest partition / rows
    hot_keys: int  # partitions with more than 1 / parallelism of the rows
    top: list[tuple[str, int]]  # the largest partitions (key, rows)

    @classmethod
    def read(cls, path: Path) -> Skew:
        """A skew as measure-skew wrote it (skew.json)."""
        return cls(**json.loads(path.read_text()))


def measure_skew(cfg: QueryConfig, spark: SparkSession, state: Path) -> Skew:
    """Rows per partition key of the query's (first) TopN over the recent staged input."""
    plan = plan_for(cfg, load_script(cfg.sql), spark, split=1)
    ranks = splittable(plan)
    if not ranks:
        raise InputError(f"query {cfg.name}: hotspot splitting needs a TopN, and the query has "
                         "none (ROW_NUMBER / RANK / DENSE_RANK .. WHERE rownum <= N)")
    rank = ranks[0]
    limit = settings(cfg).window_rows
    files = {}
    for scan in scans(plan):
        key = scan.table.name.lower()
        parts = staged_files(state, key)
        keep = max(1, math.ceil(limit / cfg.rows_per_batch))
        files[key] = parts[-keep:]
    df = batch_dataframe(spark, rank.child, files)
    keys = [F.col(quote(p)) for p in rank.partition_by] or [F.lit("(all rows)")]
    counts = df.groupBy(*keys).agg(F.count(F.lit(1)).alias("tw__rows"))
    rows = [(r[:-1], r[-1]) for r in counts.orderBy(F.col("tw__rows").desc()).collect()]
    total = sum(n for _, n in rows)
    p = settings(cfg).parallelism
    return Skew(total, len(rows), rows[0][1] / total if total else 0.0,
                sum(1 for _, n in rows if n * p > total),
                [(" | ".join("NULL" if v is None else str(v) for v in k), n) for k, n in rows[:5]])


def choose_split(skew: Skew, current: int, parallelism: int, max_split: int) -> tuple[int, str]:
    """The split factor for this skew, and why (see the module docstring)."""
    load = skew.largest_share * parallelism
    if skew.rows == 0:
        return current, "no recent input: keep the current factor"
    why = (f"the largest partition has {skew.largest_share:.1%} of the rows = {load:.2f} "
           f"tasks' worth at parallelism {parallelism}")
    wanted = _needed(load, max_split)
    if wanted > current:
        return wanted, why
    lower = _needed(2 * load, max_split)
    if lower < current:
        return lower, why + f"; even twice that needs only {lower}"
    return current, why + f"; {current} stays (twice that would need {lower})"


def _needed(load: float, max_split: int) -> int:
    """The split a partition carrying ``load`` tasks' worth of rows needs (module docstring)."""
    if load <= 1:
        return 1
    return min(max_split, 1 << math.ceil(math.log2(2 * load)))


def decide(cfg_path: Path, skew: Skew, now: datetime | None = None) -> dict:
    """Apply the rule to a measured skew: audit it, and write a changed factor where the query's
    config is read with it ($TWINFLOW_HOME/config/<query>.json). Returns the audit record."""
    cfg = QueryConfig.load(cfg_path)
    opts = settings(cfg)
    old = opts.split
    new, why = choose_split(skew, old, opts.parallelism, opts.max_split)
    record = {"at": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
              "query": cfg.name, "old_split": old, "new_split": new, "changed": new != old,
              "reason": why, "rule": RULE, "parallelism": opts.parallelism,
              "skew": asdict(skew)}
    append_audit(cfg.name, record)
    if new != old:
        last = LastChange(**{k: record[k] for k in ("at", "old_split", "new_split", "reason")})
        write_json(chosen_settings(cfg.name), Chosen(hotspot=ChosenHotspot(
            split=new, last_change=last)).model_dump())
    return record
