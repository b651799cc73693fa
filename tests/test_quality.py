"""The quality gate (operators_lib/ops/quality.py), through a GX file context, on a Spark
DataFrame read back from an output CSV with its types (io/output.read_csv_frame): GX severity
is honoured (a failed warning passes with the failure listed, a failed critical expectation
fails), and each validation is in the Data Docs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from operators_lib.errors import InputError
from operators_lib.io.output import read_csv_frame
from operators_lib.ops.quality import data_docs_index, register_suite, validate

REPO = Path(__file__).resolve().parents[1]


def _suite(root: Path, severity: str) -> None:
    register_suite({"name": "s", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "k"}},
        {"type": "expect_column_values_to_be_between", "severity": severity,
         "kwargs": {"column": "v", "max_value": 10}}]}, root)


def test_a_failed_warning_passes_and_a_failed_critical_fails(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("TWINFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TWINFLOW_GX_ROOT", str(tmp_path))
    shutil.copytree(REPO / "expectations" / "gx", tmp_path / "gx",
                    ignore=shutil.ignore_patterns("uncommitted"))
    (tmp_path / "out.csv").write_text('k,v,a\na,9,"[1, NULL]"\nb,42,\n')
    rows = read_csv_frame(spark, tmp_path / "out.csv", [("k", "STRING"), ("v", "BIGINT"),
                                                         ("a", "ARRAY<INT>")])
    # numbers, not text (as text "9" > "10": the bound would fail both rows)
    assert rows.where("v <= 10").count() == 1
    assert [r.a for r in rows.collect()] == ["[1, NULL]", None]  # nested values: their text
    _suite(tmp_path, "warning")
    summary = validate(rows, "s", "20240101T100000")
    assert summary["success"] and not summary["failed"]
    assert [(w["type"], w["severity"]) for w in summary["warnings"]] == [
        ("expect_column_values_to_be_between", "warning")]
    _suite(tmp_path, "critical")
    summary = validate(rows, "s", "20240101T110000", runtime=[
        {"type": "expect_table_row_count_to_equal", "kwargs": {"value": 3}}])
    assert not summary["success"] and not summary["warnings"]
    assert [(f["type"], f["severity"]) for f in summary["failed"]] == [
        ("expect_column_values_to_be_between", "critical"),
        ("expect_table_row_count_to_equal", "critical")]
    # Both validations are pages of the Data Docs site under $TWINFLOW_HOME, not the repo.
    page = Path(summary["data_docs"].removeprefix("file://"))
    assert page.is_file() and page.is_relative_to(tmp_path / "home" / "gx" / "data_docs")
    assert data_docs_index().is_file()
    assert len(list((tmp_path / "home" / "gx" / "data_docs" / "validations").rglob("*.html"))) == 2
    with pytest.raises(InputError, match="no checkpoint 'nope'"):
        validate(rows, "nope", "20240101T120000")
