"""Guards on a run's state, without Spark: which state resumes, a changelog checked against the
checkpoint's commits, debris of a failed staging, and the rejected-rows limit."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from operators_lib.catalog import TableDef
from operators_lib.errors import InputError, StateError
from operators_lib.io import ingest
from operators_lib.plan import BATCH, EMIT_TS, OP, PLACE, ROWNUM, SEQ
from operators_lib.runs.query_config import QueryConfig
from operators_lib.runs.spec import RunSpec
from operators_lib.runs.staging import check_rejected, resume_decision
from operators_lib.state.lifecycle import discard_unstaged
from operators_lib.stream.runner import changelog_files, changelog_frame


def _record(tmp: Path, **record) -> Path:
    """A state directory whose manifest records a stream run."""
    (tmp / "manifest.json").write_text(json.dumps({"tables": {}, "run": record}))
    return tmp


@pytest.mark.parametrize("record, mode, expected", [
    ({"fingerprint": "f", "status": "stopped"}, "stream", (True, None)),
    ({"fingerprint": "f", "status": "stopped"}, "both", (True, None)),
    ({"fingerprint": "g", "status": "stopped"}, "both",
     (False, "the stopped stream run was for other SQL, data or arguments")),
    ({"fingerprint": "f", "status": "stopped"}, "batch",
     (False, "batch mode does not resume the stopped stream run")),
    # a failed or killed run never marked its state resumable: recomputed, and said so
    ({"fingerprint": "f", "status": "running"}, "both",
     (False, "the previous stream run did not finish (it failed or was interrupted)")),
    ({"fingerprint": "f", "status": "complete"}, "both", (False, None)),
])
def test_only_a_stopped_stream_resumes(tmp_path, record, mode, expected):
    assert resume_decision(_record(tmp_path, **record), "f", mode) == expected


def test_state_without_a_record_is_not_resumed_silently(tmp_path):
    assert resume_decision(tmp_path, "f", "both") == (False, None)
    (tmp_path / "checkpoint").mkdir()
    assert resume_decision(tmp_path, "f", "both") == (
        False, "the stream state has no record of how its run ended")


def _state(tmp: Path, commits: list[int], batches: list[int], complete: bool = True
           ) -> tuple[Path, Path]:
    changelog, checkpoint = tmp / "changelog", tmp / "checkpoint"
    changelog.mkdir()
    (checkpoint / "commits").mkdir(parents=True)
    for c in commits:
        (checkpoint / "commits" / str(c)).write_text("v1\n{}")
        (checkpoint / "commits" / f".{c}.crc").write_text("")
    for b in batches:
        # rows of batch b: b rows, written out of emission order over two parts
        rows = pa.table({OP: ["+I"] * b, BATCH: [b] * b, EMIT_TS: [10 - k for k in range(b)],
                         ROWNUM: [0] * b, SEQ: list(range(b))},
                        schema=pa.schema([(OP, pa.string()), (BATCH, pa.int64()),
                                          (EMIT_TS, pa.int64()), (ROWNUM, pa.int64()),
                                          (SEQ, pa.int64())]))
        out = changelog / f"batch-{b:08d}"
        out.mkdir()
        pq.write_table(rows.slice(0, 1), out / "part-00001.parquet")
        pq.write_table(rows.slice(1), out / "part-00000.parquet")
        if complete or b != batches[-1]:
            (out / "_SUCCESS").touch()
    return changelog, checkpoint


def test_changelog_is_read_in_emission_order_empty_batches_included(spark, tmp_path):
    changelog = changelog_frame(spark, *_state(tmp_path, [0, 1, 2, 3], [0, 1, 2, 3]))
    rows = changelog.orderBy(*PLACE).collect()
    assert [r[BATCH] for r in rows] == [1, 2, 2, 3, 3, 3]
    assert [r[EMIT_TS] for r in rows] == [10, 9, 10, 8, 9, 10]


def test_an_incomplete_changelog_segment_is_an_error_not_a_result(tmp_path):
    with pytest.raises(StateError, match=r"micro-batch\(es\) 3 is missing"):
        changelog_files(*_state(tmp_path, [0, 1, 2, 3], [0, 1, 2, 3], complete=False))


def test_a_changelog_of_the_old_layout_is_refused_by_name(tmp_path):
    changelog, checkpoint = _state(tmp_path, [0], [0])
    (changelog / "batch-00000001.parquet").write_text("x")
    with pytest.raises(StateError, match="earlier version of twinflow"):
        changelog_files(changelog, checkpoint)


def test_a_missing_changelog_segment_is_an_error_not_a_result(tmp_path):
    # Spark keeps only recent commits: batches 0..4 are committed although commits/0 is gone
    with pytest.raises(StateError, match=r"micro-batch\(es\) 2 is missing .* batches 0\.\.4"):
        changelog_files(*_state(tmp_path, [1, 2, 3, 4], [0, 1, 3, 4]))


def test_changelog_files_the_checkpoint_never_committed_are_an_error(tmp_path):
    with pytest.raises(StateError, match=r"micro-batch\(es\) 2, 3 that the checkpoint"):
        changelog_files(*_state(tmp_path, [0, 1], [0, 1, 2, 3]))
    with pytest.raises(StateError, match="never committed"):  # the checkpoint is gone
        changelog_files(tmp_path / "changelog", tmp_path / "nowhere")


def test_staged_files_beyond_the_manifest_are_discarded(tmp_path):
    """A run that failed mid-staging left parts 2, 3; the manifest records parts 0, 1 only.
    The next run must be able to stage its own parts 2, 3."""
    (tmp_path / "staged/t").mkdir(parents=True)
    for k in range(4):
        (tmp_path / "staged/t" / f"part-{k:06d}.parquet").write_text("x")
    (tmp_path / "manifest.json").write_text(json.dumps({"tables": {"t": {"parts": 2}}}))
    discard_unstaged(tmp_path)
    assert sorted(p.name for p in (tmp_path / "staged/t").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]


def _parsed(*files: tuple[str, int, int]) -> ingest.Parsed:
    """Parsed input of table t: (file name, accepted rows, rejected rows) per file."""
    return ingest.Parsed(Path("parsed"), {"t": TableDef("t", ())}, {"t": [
        ingest.InputFile("t", i, Path(name), ()) for i, (name, _, _) in enumerate(files)]}, [
        ingest.Piece("t", i, 0, good, bad, {}, "") for i, (_, good, bad) in enumerate(files)])


def test_more_rejected_rows_than_allowed_stop_the_run(tmp_path):
    cfg = QueryConfig(name="q", sql=[], inputs={}, expectations="suite")
    new = _parsed(("a.csv", 3, 0), ("b.csv", 4, 6))
    with pytest.raises(InputError) as err:
        check_rejected(RunSpec.scheduled(cfg, tmp_path, tmp_path / "run"), new,
                       tmp_path / "rejected.csv")
    message = str(err.value)
    assert "6 of 13 rows" in message and "b.csv: 6" in message
    assert "max_rejected_rows = 0" in message and str(tmp_path / "rejected.csv") in message
    assert "Nothing was staged" in message
    cfg.max_rejected_rows = 6
    check_rejected(RunSpec.scheduled(cfg, tmp_path, tmp_path / "run"), new,
                   tmp_path / "rejected.csv")  # within the limit: goes on


def test_max_rejected_rows_must_be_a_count(tmp_path):
    path = tmp_path / "q.json"
    raw = {"name": "q", "sql": [], "inputs": {}, "expectations": "s"}
    path.write_text(json.dumps(raw))
    assert QueryConfig.load(path).max_rejected_rows == 0
    path.write_text(json.dumps(raw | {"max_rejected_rows": 0.1}))
    with pytest.raises(InputError, match="max_rejected_rows: input should be a valid integer"):
        QueryConfig.load(path)
