"""``twinflow state snapshot|list|verify|rollback|inspect`` (operators_lib/state/snapshots.py,
runs/verify.py, state/inspect.py) on a ``twinflow run`` directory, with Structured
Streaming: snapshot, continue, roll back, continue again must give what one uninterrupted run
gives; a snapshot verified resumes to the live state's result."""

from __future__ import annotations

import json
import os

from jobs.cli import main
from operators_lib.state import lifecycle, snapshots
from tests.test_failed_runs import _args, _expected, _rows


def _state(tmp_path, capsys, *args: str) -> tuple[int, dict | None, str]:
    code = main(args if args[0] == "report" else ["state", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def test_snapshot_continue_rollback_continue_equals_an_uninterrupted_run(
        spark, tmp_path, capsys):
    whole = tmp_path / "whole"
    whole.mkdir()
    assert main(_args(whole)) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert _rows(whole / "out" / "stream.csv") == _expected()

    assert main(_args(tmp_path, "--stop-after-batches", "2")) == 0, capsys.readouterr().err
    capsys.readouterr()
    out = str(tmp_path / "out")
    code, snap, err = _state(tmp_path, capsys, "snapshot", "--out", out)
    assert code == 0, err
    assert snap["batch_id"] == 1 and snap["bytes"] > 0  # two micro-batches: 0 and 1
    assert main(_args(tmp_path)) == 0, capsys.readouterr().err  # continue to the end
    capsys.readouterr()
    staged = tmp_path / "out" / "_state" / "staged" / "t" / "part-000000.parquet"
    linked = tmp_path / "out" / "_state" / "snapshots" / snap["id"] / "staged" / "t"
    assert os.path.samefile(staged, linked / staged.name)  # parts are linked, not copied
    # The snapshot resumes in a scratch directory to the live state's result.
    code, verified, err = _state(tmp_path, capsys, "verify", "--out", out, "--snapshot",
                                 snap["id"])
    assert code == 0, err
    assert (verified["verdict"], verified["rows"], verified["snapshot_batch_id"]) == (
        "equal", len(_expected()), 1)
    assert verified["live_batch_id"] > 1 and verified["resumed_micro_batches"] >= 1
    assert not list((tmp_path / "out" / "_state").glob(".verify-*"))  # the scratch is gone

    code, listed, _ = _state(tmp_path, capsys, "list", "--out", out)
    assert [s["id"] for s in listed["snapshots"]] == [snap["id"]]
    code, back, err = _state(tmp_path, capsys, "rollback", "--out", out, "--snapshot", snap["id"])
    assert code == 0, err
    assert back["batch_id"] == 1
    # The stopped run's state again: the same command resumes it, from micro-batch 2.
    assert main(_args(tmp_path)) == 0, capsys.readouterr().err
    capsys.readouterr()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "recomputed_from_scratch" not in report["stream"], report["warnings"]
    assert report["stream"]["micro_batches_this_run"] < 7  # 6 rows, one per batch, + the end
    for name in ("changelog.csv", "stream.csv"):
        assert (tmp_path / "out" / name).read_text() == (whole / "out" / name).read_text()

    # The rotation's snapshots are pruned apart from those taken by hand: keeping the newest
    # rotation's, never one taken by hand (the rotation DAG's prune step).
    state = snapshots.state_dir(tmp_path / "out")
    rotated = [snapshots.snapshot(state, origin=snapshots.ROTATION)["id"] for _ in range(2)]
    assert snapshots.prune(state, 1, snapshots.ROTATION) == rotated[:1]
    assert [s["id"] for s in snapshots.list_snapshots(state)] == [snap["id"], rotated[1]]

    # The history kept every run (the rollback does not roll it back), and the report draws it.
    code, drawn, err = _state(tmp_path, capsys, "report", "--out", out, "--html",
                              str(tmp_path / "report.html"))
    assert code == 0, err
    assert (drawn["runs"], drawn["micro_batches"]) == (3, 2 + 5 + 5)
    page = (tmp_path / "report.html").read_text()
    assert page.count("<svg") == len(drawn["charts"]) >= 4 and "not_run" in page


def test_bad_state_commands_are_input_errors(spark, tmp_path, capsys):
    assert _state(tmp_path, capsys, "list", "--out", str(tmp_path))[0] == 2
    assert main(_args(tmp_path, "--stop-after-batches", "1")) == 0, capsys.readouterr().err
    capsys.readouterr()
    out = str(tmp_path / "out")
    code, _, err = _state(tmp_path, capsys, "rollback", "--out", out, "--snapshot", "nope")
    assert code == 2 and "no snapshot 'nope' (snapshots: none)" in err
    assert _state(tmp_path, capsys, "snapshot", "--out", out, "--keep", "0")[0] == 2
    ids = [_state(tmp_path, capsys, "snapshot", "--out", out, "--keep", "2")[1]["id"]
           for _ in range(3)]
    assert [s["id"] for s in _state(tmp_path, capsys, "list", "--out", out)[1]["snapshots"]] \
        == ids[1:]
    with lifecycle.locked(tmp_path / "out" / "_state"):  # a run holds the state
        code, _, err = _state(tmp_path, capsys, "snapshot", "--out", out)
    assert code == 2 and "in use by another run" in err
    code, _, err = _state(tmp_path, capsys, "verify", "--out", out, "--snapshot", "nope")
    assert code == 2 and "no snapshot 'nope'" in err
    # Without a state TTL there is nothing to compact.
    code, compacted, err = _state(tmp_path, capsys, "compact", "--out", out)
    assert code == 0 and compacted["compacted"] is False and "no state TTL" in compacted["reason"]
    # One micro-batch of the GROUP BY: one key ("a"), in one page.
    code, seen, err = _state(tmp_path, capsys, "inspect", "--out", out)
    assert code == 0, err
    (group,) = seen["operators"]
    assert (seen["batch_id"], group["operator"], group["keys"], group["rows"]) == (
        0, "group", 1, 1)
    assert group["bytes"] > 0 and group["disk_bytes"] > 0
