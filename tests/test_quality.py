"""The quality gate (operators_lib/quality.py) honours GX severity: a failed warning passes
with the failure listed, a failed critical expectation fails."""

from __future__ import annotations

import json

from operators_lib.quality import validate_csv


def _suite(tmp_path, severity: str) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"name": "s", "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "k"}},
        {"type": "expect_column_values_to_be_between", "severity": severity,
         "kwargs": {"column": "v", "max_value": 10}}]}))


def test_a_failed_warning_passes_and_a_failed_critical_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("TWINFLOW_GX_ROOT", str(tmp_path))
    (tmp_path / "out.csv").write_text("k,v\na,1\nb,42\n")
    _suite(tmp_path, "warning")
    summary = validate_csv(tmp_path / "out.csv", "s")
    assert summary["success"] and not summary["failed"]
    assert [(w["type"], w["severity"]) for w in summary["warnings"]] == [
        ("expect_column_values_to_be_between", "warning")]
    _suite(tmp_path, "critical")
    summary = validate_csv(tmp_path / "out.csv", "s")
    assert not summary["success"] and not summary["warnings"]
    assert [f["severity"] for f in summary["failed"]] == ["critical"]
