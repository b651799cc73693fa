"""Nexmark (benchmarks/nexmark/): every query of nexmark-flink as written equals Flink's result
on a small generated input (3,000 events over 30 s of event time; Flink's results digested in
benchmarks/nexmark/expected/ by ``run.py --derive``), in batch mode and in stream mode on the
operator harness; two of them also on Spark's Structured Streaming. A query Flink cannot run as
written must be refused (exit 2). The generator's model is checked against nexmark's rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.harness import HarnessRuntime

NEXMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "nexmark"
sys.path.insert(0, str(NEXMARK))

import generate  # noqa: E402
import run as nexmark  # noqa: E402

EVENTS, RATE, SEED = 3000, 100, 1


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    return nexmark.tables(nexmark.data_dir(EVENTS, SEED, RATE, tmp_path_factory.mktemp("nx")))


@pytest.fixture(scope="module")
def expected(tables) -> dict:
    return nexmark.load_expected(EVENTS, SEED, RATE, tables["bid"].parent)


@pytest.mark.parametrize("query", [q for q in nexmark.QUERIES if q != nexmark.PROCESSING_TIME])
def test_query_equals_flink(spark, tmp_path, tables, expected, query):
    verdict, ok = nexmark.check_query(spark, query, tables, tmp_path, expected[query],
                                      runtime=HarnessRuntime())
    assert ok, f"{query}: {verdict}"


@pytest.mark.parametrize("query", ["q5", "q7", "q12", "q13"])
def test_query_on_spark_equals_flink(spark, tmp_path, tables, expected, query):
    """In real micro-batches: windows under a join (q5: a window join over HOP counts and
    their maximum; q7: a regular join over a TUMBLE maximum), processing-time windows (q12,
    which the harness cannot run: each bid counted once) and a lookup join (q13: Spark's
    stream-static join)."""
    verdict, ok = nexmark.check_query(spark, query, tables, tmp_path, expected[query])
    assert ok, f"{query}: {verdict}"


def test_every_query_flink_runs_has_a_result(expected):
    """The committed file covers q0-q23; a query without Flink's rows has Flink's error (q6:
    invalid; q14: nexmark's UDF jar; q23: ``A.dateTime`` unquoted, a reserved word), but q12
    (processing time)."""
    assert sorted(expected, key=lambda q: int(q[1:])) == nexmark.QUERIES
    refused = sorted(q for q, want in expected.items() if "flink_error" in want)
    assert refused == ["q14", "q23", "q6"], refused
    assert expected[nexmark.PROCESSING_TIME] == {"processing_time": True}


def test_generator_follows_nexmarks_model(tmp_path):
    import pyarrow.csv as pacsv

    counts = generate.generate(tmp_path, 5000, seed=3, rate=1000)
    assert counts == {"person": 100, "auction": 300, "bid": 4600}  # 1 : 3 : 46
    person = pacsv.read_csv(tmp_path / "person.csv").to_pandas()
    auction = pacsv.read_csv(tmp_path / "auction.csv").to_pandas()
    bid = pacsv.read_csv(tmp_path / "bid.csv").to_pandas()
    # ids are dense and start at 1000 + 1; every event's time is base + (k + 1) ms at 1000/s
    assert sorted(person["id"]) == list(range(1001, 1101))
    assert sorted(auction["id"]) == list(range(1001, 1301))
    assert set(auction["category"]) <= set(range(10, 15))
    assert (auction["reserve"] > auction["initialBid"]).all()
    assert (auction["expires"] > auction["dateTime"]).all()
    # hot sellers are the first of each 100 people (3 in 4 auctions)
    hot = (auction["seller"] - 1000) % 100 == 0
    assert 0.65 < hot.mean() < 0.85
    # bidders carry nexmark's doubled FIRST_PERSON_ID; hot bidders the second of 100
    assert ((bid["bidder"] - 2000) % 100 == 1).mean() > 0.65
    assert bid["price"].between(100, 10**8).all()
    hot_channel = bid["channel"].isin(generate.HOT_CHANNELS)
    assert 0.45 < hot_channel.mean() < 0.55
    assert bid["url"].str.startswith("https://www.nexmark.com/").all()
    assert bid["extra"].str.len().between(54, 81).all()
    # out of order by at most 3 s, less than the 4 s watermark delay: nothing is late
    ts = bid["dateTime"].astype("datetime64[ms]").astype(np.int64).to_numpy()
    behind = np.maximum.accumulate(ts) - ts
    assert 0 < behind.max() <= 3000
    # deterministic by seed
    again = tmp_path / "again"
    generate.generate(again, 5000, seed=3, rate=1000)
    assert (again / "bid.csv").read_bytes() == (tmp_path / "bid.csv").read_bytes()


def test_throughput_parts_merge_into_one_record(tmp_path):
    """10M runs in parts: a part replaces the queries it ran and keeps the others, in query
    order; a record of another size starts afresh."""
    import throughput

    out = tmp_path / "nexmark.json"
    base = {"events": 10, "seed": 1, "rate": 1, "rows_per_batch": 5, "machine": {}}
    first = {**base, "date": "d1", "command": "c1",
             "results": [{"query": "q10", "s": 1}, {"query": "q2", "s": 1}]}
    out.write_text(json.dumps(throughput.merged(first, out)))
    second = throughput.merged({**base, "date": "d2", "command": "c2",
                                "results": [{"query": "q2", "s": 2}, {"query": "q3", "s": 2}]},
                               out)
    assert second["results"] == [{"query": "q2", "s": 2}, {"query": "q3", "s": 2},
                                 {"query": "q10", "s": 1}]
    assert [p["command"] for p in second["parts"]] == ["c1", "c2"]
    other = {**first, "events": 20}
    assert throughput.merged(other, out) is other


def test_results_of_other_data_are_refused_with_the_command_to_derive_them(tmp_path, tables):
    """Flink's results hold for the data they came from: after a change to the generator the
    check names the command that derives them again instead of reporting queries DIFFERENT."""
    other = tmp_path / "data"
    other.mkdir()
    for path in tables.values():
        (other / path.name).write_bytes(path.read_bytes().replace(b"\n1", b"\n2", 1))
    with pytest.raises(SystemExit, match="derive them again with: .*run.py --events 3000"):
        nexmark.load_expected(EVENTS, SEED, RATE, other)
