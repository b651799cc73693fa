"""The function catalog against real Flink: each case under tests/cases/functions/ calls many
catalog functions over edge values (NULLs, empty strings, negatives, unicode, month ends) and
must give Flink's batch result (expected/batch_final.csv, from tests/oracle/regen_expected.py).
Batch mode only: the functions are the same Spark SQL text in both modes (plan.py), and the
stream machinery is tested by the other case suites."""

from __future__ import annotations

import pytest

from tests.caselib import all_cases, assert_final

CASES = all_cases("functions")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_functions_equal_flink_batch(spark, tmp_path, case):
    result = case.run(spark, tmp_path / "out", mode="batch")
    assert result.exit_code == 0, result.message
    assert_final(case, tmp_path / "out", "batch.csv", "batch_final.csv")
