"""TopN benchmark: twinflow batch vs stream vs real Flink, single-level vs hotspot-split TopN.

    .venv/bin/python benchmarks/topn_bench.py [--rows 1000000] [--skip-flink]
        [--queries top10_per_category,global_top10] [--splits 1,8,128]
        [--modes batch,stream_1_batch,stream_10_batches] [--out FILE]

Data: benchmarks/data/topn_sales_<rows>.csv (generated once, not committed):
shop_sales(shop_id STRING, category STRING, sales BIGINT), ``--rows`` rows, skewed: shop_id
Zipf-like over 100,000 shops (exponent 1.1), category Zipf-like over 100 categories (the
largest holds about a fifth of the rows), sales uniform in [0, 10^9).
Queries: top 10 shops (rows) per category by sales, and the global top 10 (one partition: the
extreme hotspot), each single-level; the global top 10 also with ``--topn-split S``
(topn_split.py: level 1 by pmod(xxhash64(row), S)) for each S of ``--splits``.
Flink (PyFlink 2.3, parallelism 2, benchmarks/flink_query.py): the same single-level queries,
and the nested global top 10 written as the seed writes it (level 1 ``PARTITION BY
HASH_CODE(shop_id) % S``). Timed as in join_bench.py; rows/s counts input rows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from join_bench import (  # noqa: E402
    DATA,
    Bench,
    attempt,
    finish,
    header,
    mode_table,
    parse,
    result_line,
)

DDL = "CREATE TABLE shop_sales (\n  shop_id STRING,\n  category STRING,\n  sales BIGINT\n)"
TOPN = ("SELECT * FROM (SELECT shop_id, category, sales, ROW_NUMBER() OVER ({partition}ORDER BY "
        "sales DESC) AS rownum FROM {source}) WHERE rownum <= 10")
QUERIES = {"top10_per_category": TOPN.format(partition="PARTITION BY category ",
                                             source="shop_sales"),
           "global_top10": TOPN.format(partition="", source="shop_sales")}
MODES = ["batch", "stream_1_batch", "stream_10_batches"]
SINK = "shop_id STRING, category STRING, sales BIGINT, rownum BIGINT"


def nested_sql(split: int) -> str:
    """The seed's nested TopN: level 1 by HASH_CODE(shop_id) % S, level 2 global."""
    level1 = TOPN.format(partition=f"PARTITION BY HASH_CODE(shop_id) % {split} ",
                         source="shop_sales").replace("SELECT * FROM", "SELECT shop_id, "
                                                      "category, sales FROM", 1)
    return TOPN.format(partition="", source=f"({level1})")


def zipf_choice(rng, n: int, size: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return rng.choice(n, size=size, p=weights / weights.sum())


def generate(rows: int) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"topn_sales_{rows}.csv"
    if not path.exists() or not path.with_suffix(".noheader.csv").exists():
        rng = np.random.default_rng(7)
        df = pd.DataFrame({
            "shop_id": [f"shop-{i}" for i in zipf_choice(rng, 100_000, rows, 1.1)],
            "category": [f"cat-{i}" for i in zipf_choice(rng, 100, rows, 1.1)],
            "sales": rng.integers(0, 10**9, rows)})
        df.to_csv(path.with_suffix(".noheader.csv"), index=False, header=False)
        df.to_csv(path, index=False)
    return path


def skew(path: Path) -> dict:
    df = pd.read_csv(path, usecols=["shop_id", "category"])
    return {"largest_category_share": round(df["category"].value_counts(normalize=True).iloc[0],
                                            3),
            "largest_shop_share": round(df["shop_id"].value_counts(normalize=True).iloc[0], 4),
            "shops": int(df["shop_id"].nunique())}


def bench_twinflow(path: Path, splits: list[int]) -> dict:
    from operators_lib.topn_split import split_topn

    bench = Bench({"shop_sales": path})
    runs = [(name, query, 1) for name, query in QUERIES.items()]
    if "global_top10" in QUERIES:
        runs += [(f"global_top10_split_{s}", QUERIES["global_top10"], s) for s in splits if s > 1]
    results: dict = {}
    try:
        for name, query, split in runs:
            work = DATA / "work" / f"topn_{name}"
            plan, tables = bench.plan(work, [DDL], query)
            plan = split_topn(plan, split)
            r = {}
            for label in MODES:
                r[label] = m = attempt(bench.run, plan, tables, work, label)
                print(name, label, *result_line(m), flush=True)
            results[name] = r
        results["ingest_s"] = bench.ingest_s
    finally:
        bench.spark.stop()
    return results


def bench_flink(path: Path, splits: list[int]) -> dict:
    python = Path.home() / ".cache" / "flink-venv" / "bin" / "python"
    if not python.exists():
        return {"skipped": "no Flink venv (see ../shared/flink-oracle/README.md)"}
    queries = dict(QUERIES)
    if "global_top10" in QUERIES:
        queries |= {f"global_top10_split_{s}": nested_sql(s) for s in splits if s > 1}
    out = {}
    for name, query in queries.items():
        cmd = [str(python), str(HERE / "flink_query.py"), "--sink", SINK, "--query", query,
               "--ddl", DDL, "--csv", str(path.with_suffix(".noheader.csv"))]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        line = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        out[name] = json.loads(line[-1]) if line else {"error": proc.stderr[-500:]}
        print(name, "flink", out[name], flush=True)
    return out


def summary(result: dict) -> str:
    tw = result["twinflow"]
    return "\n".join(mode_table([n for n in tw if n != "ingest_s"], tw, result.get("flink", {})))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--splits", default="1,8,128", help="split factors of the global top 10")
    args = parse(ap, QUERIES, MODES, "topn")
    splits = [int(s) for s in args.splits.split(",")]
    start = time.perf_counter()
    path = generate(args.rows)
    result = header("topn_bench", rows=args.rows, skew=skew(path))
    result["twinflow"] = bench_twinflow(path, splits)
    if not args.skip_flink:
        result["flink"] = bench_flink(path, splits)
    finish(result, start, args.out, summary(result))

if __name__ == "__main__":
    main()
