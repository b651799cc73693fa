"""``twinflow report``: one static HTML page of a query's run history (history.py), for the
people who watch it. Self-contained (charts are inline SVG drawn by matplotlib, no script, no
network), so it can be mailed, archived or opened offline.

Charts: throughput per micro-batch; watermark per micro-batch and lag per run; state rows and
bytes per micro-batch; late and rejected rows per run; parity and quality-gate outcomes per
run. Then tables of the runs, the input tables per run (their own watermarks and how long
their input waited), the audits and the state compactions, and a link to the Great
Expectations Data Docs once quality gates have built them (quality.py). Counts are per run, as
labelled.
"""

from __future__ import annotations

import html
import io
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from operators_lib.io.output import write_text  # noqa: E402
from operators_lib.ops import history  # noqa: E402
from operators_lib.ops.quality import data_docs_index  # noqa: E402
from operators_lib.stream.runner import last_commit  # noqa: E402

_WARNED = "passed_with_warnings"  # the gate: only warning-severity expectations failed
_GOOD = {"equal", "equal_for_emitted_rows", "explained_by_late_rows", "explained_by_ttl",
         "explained_by_empty_input",
         "passed", _WARNED}
_NEUTRAL = {"not_applicable", "not_run"}


def render(state: Path, out: Path) -> dict:
    """Write the report of ``state``'s history to ``out``; returns what it drew."""
    h = history.history(state)
    runs, batches = h["runs"], h["micro_batches"]
    batches = batches.assign(
        t=pd.to_datetime(batches["time"], utc=True, errors="coerce"),
        wm=pd.to_datetime(batches["watermark"], utc=True, errors="coerce"))
    charts = [
        # (a compaction's micro-batch reads sweep rows, not input)
        ("Throughput: input rows per second, each micro-batch", _throughput(batches[
            ~batches["run"].isin(runs.loc[runs["kind"] == "compact", "run"])])),
        ("Watermark of each micro-batch, and lag (run end - watermark) per run",
         _watermark(batches, runs)),
        ("State after each micro-batch: entries and bytes (RocksDB SST files)", _state(batches)),
        ("Late and rejected rows per run", _late_rejected(runs)),
        ("Parity and quality gate per run", _outcomes(runs)),
    ]
    drawn = [(title, svg) for title, svg in charts if svg]
    page = _page(state, runs, h, drawn)
    write_text(out, page)  # whole or not at all: the Airflow UI may be serving it
    docs = data_docs_index()
    return {"html": str(out), "runs": len(runs), "micro_batches": len(batches),
            "charts": [title for title, _ in drawn],
            "data_docs": docs.as_uri() if docs.is_file() else None}


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _figure():
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.grid(alpha=0.3)
    return fig, ax


def _by_run(ax, frame: pd.DataFrame, x: str, y: str, **kw) -> None:
    for run, rows in frame.groupby("run", sort=False):
        ax.plot(rows[x], rows[y], marker="o", markersize=3, label=run, **kw)
    if frame["run"].nunique() <= 12:
        ax.legend(fontsize=7, title="run", title_fontsize=7, loc="best")


def _throughput(b: pd.DataFrame) -> str | None:
    b = b.dropna(subset=["t", "rows_per_s"])
    b = b[b["input_rows"] > 0]  # a run's last micro-batch may read nothing
    if b.empty:
        return None
    fig, ax = _figure()
    _by_run(ax, b, "t", "rows_per_s")
    ax.set_ylabel("rows/s")
    fig.autofmt_xdate()
    return _svg(fig)


def _watermark(b: pd.DataFrame, runs: pd.DataFrame) -> str | None:
    b = b.dropna(subset=["t", "wm"])
    b = b[b["wm"] > pd.Timestamp(0, tz=UTC)]  # Spark's "none yet" is 1970-01-01
    if b.empty:
        return None
    fig, (ax, lag) = plt.subplots(1, 2, figsize=(11, 3.2), width_ratios=[2, 1])
    _by_run(ax, b, "t", "wm")
    ax.set_ylabel("watermark (event time)")
    ax.grid(alpha=0.3)
    with_lag = runs.dropna(subset=["lag_s"])
    scale, unit = (86400, "days") if with_lag["lag_s"].max() > 2 * 86400 else (3600, "hours")
    lag.bar(with_lag["run"].astype(str), with_lag["lag_s"] / scale, color="tab:orange")
    lag.set_ylabel(f"lag ({unit})")
    lag.tick_params(axis="x", labelrotation=60, labelsize=7)
    lag.grid(alpha=0.3)
    fig.autofmt_xdate()
    return _svg(fig)


def _state(b: pd.DataFrame) -> str | None:
    b = b.dropna(subset=["t"])
    if b.empty or not (b["state_rows"].fillna(0) > 0).any():
        return None
    fig, ax = _figure()
    right = ax.twinx()
    scale, unit = next((s, u) for s, u in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1, "bytes"))
                       if b["state_bytes"].max() >= s or s == 1)
    for _, rows in b.groupby("run", sort=False):  # a line per run
        ax.plot(rows["t"], rows["state_rows"], marker="o", markersize=3, color="tab:blue")
        right.plot(rows["t"], rows["state_bytes"] / scale, marker="s", markersize=3,
                   color="tab:green")
    ax.set_ylabel("state entries", color="tab:blue")
    right.set_ylabel(f"state {unit}", color="tab:green")
    ax.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    fig.autofmt_xdate()
    return _svg(fig)


def _late_rejected(runs: pd.DataFrame) -> str | None:
    r = runs.dropna(subset=["kind"])
    if r.empty:
        return None
    fig, ax = _figure()
    x = range(len(r))
    ax.bar([i - 0.2 for i in x], r["late_rows"].fillna(0), width=0.4, label="late rows")
    ax.bar([i + 0.2 for i in x], r["rejected_rows"].fillna(0), width=0.4,
           label="rejected rows")
    ax.set_xticks(list(x), r["run"].astype(str), rotation=60, fontsize=7)
    ax.set_ylabel("rows (per run)")
    ax.set_ylim(bottom=0, top=max(1, r[["late_rows", "rejected_rows"]].max().max() * 1.1))
    ax.legend(fontsize=8)
    return _svg(fig)


def _outcomes(runs: pd.DataFrame) -> str | None:
    if runs[["parity", "gate"]].isna().all().all():
        return None
    fig, ax = plt.subplots(figsize=(9, 1.6))
    for y, col in enumerate(("parity", "gate")):
        for i, v in enumerate(runs[col]):
            if isinstance(v, str):
                ax.scatter(i, y, s=120, color=_color(v), edgecolor="black")
                ax.annotate(v, (i, y), textcoords="offset points", xytext=(0, 9),
                            ha="center", fontsize=6)
    ax.set_yticks([0, 1], ["parity", "gate"])
    ax.set_xticks(range(len(runs)), runs["run"].astype(str), rotation=60, fontsize=7)
    ax.set_ylim(-0.6, 1.8)
    return _svg(fig)


def _color(verdict: str) -> str:
    return ("gold" if verdict == _WARNED else "tab:green" if verdict in _GOOD else
            "lightgray" if verdict in _NEUTRAL else "tab:red")


def _page(state: Path, runs: pd.DataFrame, hist: dict[str, pd.DataFrame],
          charts: list[tuple[str, str]]) -> str:
    now = datetime.now(UTC)
    commits = state / "checkpoint" / "commits"
    last = last_commit(state / "checkpoint")
    age = (now.timestamp() - (commits / str(last)).stat().st_mtime) if last >= 0 else None
    facts = [("state directory", str(state)), ("generated", now.isoformat(timespec="seconds")),
             ("runs recorded", str(len(runs))),
             ("last committed micro-batch", str(last) if last >= 0 else "none"),
             ("checkpoint age", "-" if age is None else f"{age / 3600:.1f} h")]
    if not runs.empty and runs["checkpoint_bytes"].notna().any():
        facts.append(("checkpoint size",
                      f"{runs['checkpoint_bytes'].dropna().iloc[-1] / 1e6:.1f} MB"))
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             "<title>twinflow report</title><style>",
             "body{font-family:sans-serif;margin:24px;max-width:1200px}"
             "table{border-collapse:collapse;font-size:12px}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
             "th{background:#eee}.good{background:#d4f4d4}.bad{background:#f8d0d0}"
             "figure{margin:18px 0}figcaption{font-weight:bold;margin-bottom:4px}"
             ".wide{overflow-x:auto}",
             "</style></head><body><h1>twinflow: run history</h1><table>"]
    parts += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in facts]
    parts.append("</table>")
    docs = data_docs_index()
    if docs.is_file():  # the quality gates' validations (operators_lib/ops/quality.py)
        parts.append(f"<p><a href='{html.escape(docs.as_uri())}'>Great Expectations Data "
                     "Docs</a>: every validation of the quality gates, with its expectations "
                     "and observed values</p>")
    if not charts:
        parts.append("<p>No run has been recorded yet.</p>")
    for title, svg in charts:
        parts.append(f"<figure><figcaption>{html.escape(title)}</figcaption>{svg}</figure>")
    parts.append("<h2>Runs</h2>" + _table(runs))
    for name, title in (("tables", "Input tables per run: new rows, the table's own watermark, "
                                   "how long its oldest new input waited"),
                        ("audits", "Audits"),
                        ("compactions", "State compactions (per operator, before and after)")):
        if not hist[name].empty:
            parts.append(f"<h2>{html.escape(title)}</h2>" + _table(hist[name]))
    parts.append("</body></html>")
    return "\n".join(parts)


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = []
    for _, r in frame.iterrows():
        cells = []
        for c in frame.columns:
            v = r[c]
            text = "" if pd.isna(v) else str(v)
            cls = "" if c not in ("parity", "gate", "verdict") or not text else \
                " class='good'" if text in _GOOD | _NEUTRAL else " class='bad'"
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class='wide'><table><tr>{head}</tr>{''.join(rows)}</table></div>"
