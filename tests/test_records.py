"""The typed JSON records, without Spark: a manifest or run record written by an earlier
twinflow loads with the defaults its readers used, and is written back as it was (no key added,
none dropped, unknown ones kept); a report writes only what its steps set."""

from __future__ import annotations

import json

import pytest

from operators_lib.errors import StateError
from operators_lib.ops.reports import BoundedRecord, ParityReport, StreamReport
from operators_lib.state.lifecycle import RunRecord
from operators_lib.state.manifest import MANIFEST, BoundedRun, Manifest
from operators_lib.stream.layout import STATE_LAYOUT, UNRECORDED

# A manifest as a twinflow before state layouts, generations and recorded queries wrote it
# (a table without WATERMARK has no max_event_ms).
OLD = {"tables": {
    "bids": {"files": {"a.csv": {"rows": 3, "rejected": 1, "first_row": 0},
                       "b.csv": {"rows": 2, "rejected": 0, "first_row": 3}},
             "rows": 5, "parts": 2, "max_event_ms": 1719828000000},
    "items": {"files": {"i.csv": {"rows": 4, "rejected": 0, "first_row": 0}},
              "rows": 4, "parts": 1}}}


def _write(state, data: dict) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / MANIFEST).write_text(json.dumps(data))


def _saved(state) -> dict:
    return json.loads((state / MANIFEST).read_text())


def test_an_old_manifest_loads_with_the_defaults_and_is_saved_as_it_was(tmp_path):
    _write(tmp_path, OLD)
    manifest = Manifest.load(tmp_path)
    assert (manifest.state_layout, manifest.generation, manifest.topn_split) == (
        UNRECORDED, 0, 1)
    assert manifest.query is None and manifest.run is None
    assert manifest.table("items").max_event_ms is None
    assert manifest.table("bids").files["b.csv"].first_row == 3
    assert manifest.table("nothing").parts == 0 and "nothing" not in manifest.tables
    assert manifest.staged_rows == 9
    manifest.save(tmp_path)
    assert _saved(tmp_path) == OLD


def test_a_recorded_query_without_layout_or_directories_loads(tmp_path):
    old = OLD | {"query": {"sql": [{"file": "q.sql", "text": "SELECT 1"}], "topn_split": 2,
                           "rows_per_batch": 10}}
    _write(tmp_path, old)
    query = Manifest.load(tmp_path).query
    assert query.state_layout is None and query.sql[0].dir is None
    Manifest.load(tmp_path).save(tmp_path)
    assert _saved(tmp_path) == old


def test_what_a_run_sets_is_written_and_nothing_else(tmp_path):
    _write(tmp_path, OLD)
    manifest = Manifest.load(tmp_path)
    manifest.generation += 1
    manifest.run = BoundedRun(fingerprint="f", status="stopped")
    manifest.table("items")  # a read adds nothing
    manifest.save(tmp_path)
    assert _saved(tmp_path) == OLD | {"generation": 1,
                                      "run": {"fingerprint": "f", "status": "stopped"}}


def test_keys_this_twinflow_does_not_know_are_kept(tmp_path):
    newer = {"tables": {"bids": OLD["tables"]["bids"] | {"min_event_ms": 5}},
             "state_layout": STATE_LAYOUT, "retention": {"days": 7}}
    _write(tmp_path, newer)
    manifest = Manifest.load(tmp_path)
    assert manifest.model_extra == {"retention": {"days": 7}}
    manifest.save(tmp_path)
    assert _saved(tmp_path) == newer


def test_a_state_without_a_manifest_has_no_table_yet(tmp_path):
    Manifest.load(tmp_path).save(tmp_path)
    assert _saved(tmp_path) == {"tables": {}}


def test_a_damaged_manifest_is_a_state_error_naming_it(tmp_path):
    _write(tmp_path, {"tables": {"bids": {"parts": "many"}}})
    with pytest.raises(StateError, match=r"manifest\.json: .*tables\.bids\.parts"):
        Manifest.load(tmp_path)


def test_an_old_run_record_loads_with_the_defaults(tmp_path):
    scheduled = {"parts": {"bids": 2}, "rows": {"bids": 5}, "first_batch": 0, "last_batch": 1,
                 "report": {"query": "q", "interval": "20240701T000000", "emitted_rows": 4,
                            "watermark": "2024-07-01T00:00:00.000Z"}}
    (tmp_path / "a.json").write_text(json.dumps(scheduled))
    record = RunRecord.read(tmp_path / "a.json")
    assert (record.replayed, record.generation, record.topn_split) == (False, 0, 1)
    assert isinstance(record.report, StreamReport) and record.interval == "20240701T000000"
    assert (record.stream_report.emitted_rows_total, record.stream_report.rerun) == (0, False)
    assert record.report.as_json() == scheduled["report"]
    bounded = scheduled | {"report": {"interval": "k", "watermark": None, "complete": True,
                                      "late_rows": 0}}
    (tmp_path / "b.json").write_text(json.dumps(bounded))
    record = RunRecord.read(tmp_path / "b.json")
    assert isinstance(record.report, BoundedRecord) and record.watermark is None
    assert record.report.as_json() == bounded["report"]


def test_a_report_writes_what_its_steps_set(tmp_path):
    parity = ParityReport(verdict="equal_for_emitted_rows", emitted_rows=3)
    parity.note = None  # set: written as null
    parity.save(tmp_path)
    assert json.loads((tmp_path / "parity.json").read_text()) == {
        "verdict": "equal_for_emitted_rows", "emitted_rows": 3, "note": None}
    assert ParityReport.load(tmp_path) == parity
