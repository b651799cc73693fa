"""Tables bound by their WITH clause (tests/cases/sources/): Flink's ``csv``, ``json`` and
``parquet`` formats read as Flink 2.3 reads them. Each case's files were read by real Flink
with the same WITH options (expected/, tests/oracle/regen_expected.py); twinflow must give
Flink's changelog and results in both modes, and set aside, with file, line and reason, the
lines Flink drops (``case.json`` ``rejected_lines``: the lines Flink skips under
``ignore-parse-errors``, which the expected results lack). The cases run at the level of the
plan (tests/planlevel.py, the tasks' reading code in this process); one runs as ``twinflow
run`` does, its pieces parsed by Spark tasks and its stream on Structured Streaming."""

from __future__ import annotations

import csv

import pytest

from tests.caselib import all_cases, as_multiset, assert_changelog, assert_final, typed_pair
from tests.planlevel import run_case

CASES = all_cases("sources")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_with_bound_table_reads_as_flink_reads_it(spark, tmp_path, case):
    """(``files_race``: a table of several files, which Flink reads in no set order: its
    insert-only changelog is compared as a multiset.)"""
    run = run_case(spark, case, tmp_path, rows_per_batch=2)
    if case.meta.get("files_race"):
        ours, flink = typed_pair(case, run, "changelog.csv", "changelog.csv")
        assert as_multiset(ours) == as_multiset(flink)
    else:
        assert_changelog(case, run)
    assert_final(case, run, "stream.csv", "stream_final.csv")
    assert_final(case, run, "batch.csv", "batch_final.csv")


@pytest.mark.parametrize("name", ["csv_options", "json_rules"])
def test_the_lines_flink_drops_are_rejected_with_file_line_and_reason(spark, tmp_path, name):
    case = next(c for c in CASES if c.dir.name == name)
    result = case.run(spark, tmp_path / "out", mode="both", rows_per_batch=3)
    assert result.exit_code == 0, result.message
    with open(tmp_path / "out" / "rejected.csv", newline="") as fh:
        rejected = list(csv.DictReader(fh))
    assert sorted(int(r["line"]) for r in rejected) == case.meta["rejected_lines"], rejected
    assert all(r["file"].endswith(case.meta["file"]) and "Flink drops it" in r["reason"]
               for r in rejected), rejected
    assert_final(case, tmp_path / "out", "stream.csv", "stream_final.csv")
    assert_final(case, tmp_path / "out", "batch.csv", "batch_final.csv")
