"""The OVER case corpus, each case run as Flink would run it, expected results from real Flink.

Per case, at the level of its plan (tests/planlevel.py: stream on the operator harness): a
per-row stream (a watermark after every row, Flink's oracle setting), whose changelog and stream
final must equal Flink's; a stream of several micro-batches in both modes, whose batch final
must equal Flink's and whose parity must hold. On Structured Streaming, through ``twinflow run``:
processing-time cases per row (the harness has no processing time; parity does not apply to
them), and a case stopped after k micro-batches and resumed from its checkpoint, whose
changelog must equal Flink's uninterrupted one.
"""

from __future__ import annotations

import pytest

from tests.caselib import all_cases, assert_changelog, assert_final, read_csv
from tests.planlevel import run_case

CASES = all_cases("over")
RESTART = ["over/late_bounded_vs_unbounded"]


def _harness(case) -> bool:
    return not case.meta.get("proctime")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_per_row_stream_equals_flink(spark, tmp_path, case):
    """Batch mode and parity are the several-micro-batch test's (batch does not depend on the
    micro-batches); a processing-time case runs on Spark in both modes (parity: not
    applicable)."""
    n_late = len(read_csv(case.dir / "expected" / "batch_final.csv")) - len(
        read_csv(case.dir / "expected" / "stream_final.csv"))
    if _harness(case):
        run = run_case(spark, case, tmp_path, rows_per_batch=1, mode="stream")
        assert_changelog(case, run)
        assert_final(case, run, "stream.csv", "stream_final.csv")
        assert run.late_rows == n_late  # OVER emits one row per on-time input row
        return
    result = case.run(spark, tmp_path, "both", rows_per_batch=1)
    assert result.exit_code == 0, result.message
    assert_changelog(case, tmp_path)
    assert_final(case, tmp_path, "stream.csv", "stream_final.csv")
    assert result.report.late_rows == n_late
    assert_final(case, tmp_path, "batch.csv", "batch_final.csv")
    assert result.report.parity.verdict == "not_applicable", result.report.parity


@pytest.mark.parametrize("case", [c for c in CASES if _harness(c)], ids=lambda c: c.id)
def test_several_micro_batches_parity(spark, tmp_path, case):
    run = run_case(spark, case, tmp_path, rows_per_batch=3)
    assert run.parity() == ("explained_by_late_rows" if run.late_rows else "equal")
    assert run.micro_batches >= 3
    assert_final(case, run, "batch.csv", "batch_final.csv")
    if run.late_rows == 0:
        assert_final(case, run, "stream.csv", "batch_final.csv")


@pytest.mark.parametrize("case", [c for c in CASES if c.id in RESTART], ids=lambda c: c.id)
def test_restart_from_checkpoint_gives_the_same_changelog(spark, tmp_path, case):
    first = case.run(spark, tmp_path, "stream", rows_per_batch=1, stop_after=3)
    assert first.exit_code == 0
    assert not first.report.stream.complete
    assert len(read_csv(tmp_path / "changelog.csv")) - 1 < len(case.expected("changelog.csv")) - 1
    # Resumed in a session with other shuffle partitions: the stream keeps its checkpoint's.
    written_with = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(int(written_with) + 1))
    try:
        second = case.run(spark, tmp_path, "stream", rows_per_batch=1)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", written_with)
    assert second.exit_code == 0
    assert second.report.stream.complete
    assert second.report.spark.stream_shuffle_partitions == int(written_with)
    assert any("keeps the" in w for w in second.report.warnings)
    # The resumed run processed only the remaining input, not everything again.
    total_rows = sum(t.accepted_rows for t in second.report.tables.values())
    assert second.report.stream.micro_batches_this_run < total_rows + 2
    assert_changelog(case, tmp_path)


@pytest.mark.parametrize("case", all_cases("over_batch"), ids=lambda c: c.id)
def test_over_by_a_column_that_is_no_time_attribute_runs_in_batch_mode_only(spark, tmp_path,
                                                                            case):
    """Flink's batch mode answers OVER ordered by a numeric column (RANGE in its units); its
    streaming mode refuses it, and so does twinflow's stream mode (exit 2); ``both`` runs the
    batch only, parity not applicable."""
    from operators_lib.errors import InputError

    result = case.run(spark, tmp_path / "both", "both")
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "not_applicable"
    assert_final(case, tmp_path / "both", "batch.csv", "batch_final.csv")
    with pytest.raises(InputError) as e:
        case.run(spark, tmp_path / "stream", "stream")
    assert e.value.exit_code == 2 and "batch mode only" in str(e.value)
