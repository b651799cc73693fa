"""The function catalog against real Flink: each case under tests/cases/functions/ calls many
catalog functions over edge values (NULLs, empty strings, negatives, unicode, month ends) and
must give Flink's batch result (expected/batch_final.csv, from tests/oracle/regen_expected.py).
Batch mode only, at the level of the plan (tests/planlevel.py): the functions are the same Spark
SQL text in both modes (plan.py), and the stream machinery is tested by the other case suites.
One case runs through ``twinflow run`` in both modes, its stream on Structured Streaming."""

from __future__ import annotations

import pytest

from tests.caselib import all_cases, assert_final, read_csv
from tests.planlevel import run_case

CASES = all_cases("functions")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_functions_equal_flink_batch(spark, tmp_path, case):
    run = run_case(spark, case, tmp_path, rows_per_batch=1, mode="batch")
    assert_final(case, run, "batch.csv", "batch_final.csv")


def test_doubles_and_floats_print_as_flink_prints_them(spark, tmp_path):
    """Compared as text, in both modes: Java 17 (Flink's JVM) prints some DOUBLE and FLOAT
    values with more digits than the shortest decimal (2.82879384806159008E17, 4.9E-324,
    1.23456792E8), and twinflow prints what the JVM prints."""
    case = next(c for c in CASES if c.id == "functions/float_text")
    result = case.run(spark, tmp_path / "out", mode="both", rows_per_batch=3)
    assert result.exit_code == 0, result.message

    def text(rows: list[list[str]]) -> list[list[str]]:
        return sorted([["NULL" if v == "" else v for v in row] for row in rows[1:]])

    for ours, flink in (("batch.csv", "batch_final.csv"), ("stream.csv", "stream_final.csv")):
        assert text(read_csv(tmp_path / "out" / ours)) == text(case.expected(flink)), ours
