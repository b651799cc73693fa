"""Incremental runs of a window aggregate (the DAG's stream_increment and batch_parity steps,
in-process): parity pairs each emitted window with its batch row, and leaves out what the
stream left out."""

from __future__ import annotations

import json
from pathlib import Path

from operators_lib.incremental import QueryConfig, batch_parity, stream_increment

REPO = Path(__file__).resolve().parents[1]
HOP = """SELECT window_start, window_end, url, COUNT(*) AS views
FROM TABLE(HOP(TABLE page_views, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))
GROUP BY window_start, window_end, url
"""


def test_hop_windows_across_runs_keep_parity(spark, tmp_path):
    """HOP(1 min, 2 min), watermark ts - 5 s.

    run 1: 10:00:30 and 10:01:20, watermark 10:01:15: [09:59, 10:01) fires; [10:00, 10:02),
        whose first row (row 0) is also [09:59, 10:01)'s, waits: it must not be compared yet.
    run 2: 10:00:50 arrives after [09:59, 10:01) fired but before [10:00, 10:02): it counts in
        the second window only (LATE_WINDOW), and batch must leave out the same pair.
    """
    (tmp_path / "q.sql").write_text(HOP)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    cfg = QueryConfig("hop", [REPO / "examples" / "pageviews" / "page_views.sql",
                              tmp_path / "q.sql"], {"page_views": incoming}, "page_views", 100)
    state = tmp_path / "state"
    files = {1: ["u1,/home,2024-01-01 10:00:30", "u2,/home,2024-01-01 10:01:20"],
             2: ["u4,/home,2024-01-01 10:00:50", "u5,/home,2024-01-01 10:04:10"]}
    published = {1: ["2024-01-01 09:59:00.000,2024-01-01 10:01:00.000,/home,1"]}
    published[2] = published[1] + ["2024-01-01 10:00:00.000,2024-01-01 10:02:00.000,/home,3",
                                   "2024-01-01 10:01:00.000,2024-01-01 10:03:00.000,/home,1"]
    counts = {1: (1, 2, 0, 0), 2: (3, 2, 0, 1)}
    for run, rows in files.items():
        (incoming / f"{run}.csv").write_text("\n".join(["user_id,url,ts", *rows]) + "\n")
        run_dir = tmp_path / f"run{run}"
        stream_increment(cfg, spark, state, run_dir)
        assert (run_dir / "stream.csv").read_text().splitlines()[1:] == published[run]
        parity = batch_parity(cfg, spark, state, run_dir)
        assert parity["verdict"] == "equal_for_emitted_rows", parity
        assert (parity["emitted_windows"], parity["pending_windows"], parity["late_rows"],
                parity["late_row_windows"]) == counts[run]
    assert json.loads((run_dir / "stream_report.json").read_text())["late_row_windows"] == 1
