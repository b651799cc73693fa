"""What ``twinflow run`` and ``twinflow demo`` say about a pipeline run: a line per step, the
progress of the step that runs, the summary."""

from __future__ import annotations

from pathlib import Path

from jobs.console import Console
from operators_lib.ops.reports import BoundedReport, ParityReport
from operators_lib.runs.spec import StreamProgress

STEPS = {"batch": ["ingest", "batch", "parity"], "stream": ["ingest", "stream", "parity"],
         "both": ["ingest", "stream", "batch", "parity"]}
RUNNING = {"stream": "starting", "batch": "running", "parity": "comparing stream and batch"}
PARITY = {"equal": "equal", "explained_by_late_rows": "explained by late rows",
          "explained_by_ttl": "explained by state TTL", "failed": "FAILED",
          "explained_by_empty_input": "explained: no row reached the aggregate",
          "not_run": "not run", "not_applicable": "not applicable"}


class RunProgress:
    """A pipeline listener (``operators_lib.runs.spec.Listener``): after each step its line
    (unless ``query`` is given: the demo prints one line per query), then the progress of the
    next step, labelled ``query`` and prefixed with its name in the demo."""

    def __init__(self, console: Console, mode: str, query: str | None = None) -> None:
        self.console, self.steps, self.query = console, STEPS[mode], query

    def __call__(self, step: str, info: BoundedReport | StreamProgress) -> None:
        if step == "stream_progress":
            self._activity("stream", f"micro-batch {info.micro_batch + 1}, "
                                     f"{info.input_read:.0%} of the input read")
            return
        if self.query is None:
            self.console.step(step, step_line(step, info))
            if step == "ingest":
                for warning in info.warnings:
                    self.console.warn(warning)
        following = self.steps[self.steps.index(step) + 1:]
        if following:
            self._activity(following[0], RUNNING[following[0]])

    def _activity(self, step: str, text: str) -> None:
        if self.query is None:
            self.console.activity(step, text)
        else:
            self.console.activity("query", f"{self.query}: {step} {text}")


def step_line(step: str, report: BoundedReport) -> str:
    """A step's line from the report as far as the pipeline got."""
    seconds = f"{report.timings_s.get(step, 0):.1f} s"
    if step == "ingest":
        tables = "; ".join(f"{name}: {plural(t.accepted_rows, 'row')}"
                           + (f", {t.rejected_rows:,} rejected" if t.rejected_rows else "")
                           for name, t in report.tables.items())
        return f"{tables}  {seconds}"
    if step == "stream":
        s = report.stream
        if not s.complete:
            return (f"stopped after {plural(s.micro_batches_this_run, 'micro-batch')} (the "
                    f"same command resumes)  {seconds}")
        late = f", {s.late_rows:,} late" if s.late_rows else ""
        return (f"{plural(s.micro_batches_this_run, 'micro-batch')}  "
                f"{plural(s.rows, 'row')} (changelog {s.changelog_rows:,}{late})  {seconds}")
    if step == "batch":
        return f"{plural(report.batch.rows, 'row')}  {seconds}"
    return parity_text(report.parity)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 'es' if word.endswith('h') else 's'}"


def parity_text(parity: ParityReport) -> str:
    text = PARITY.get(parity.verdict, parity.verdict)
    if parity.reason:
        text += f" ({parity.reason})"
    if parity.verdict == "explained_by_late_rows":
        text += f": batch without the {parity.late_rows:,} late rows"
        if parity.late_row_windows:
            text += (f" and {parity.late_row_windows:,} rows' windows that had fired "
                     "when they arrived")
        text += " equals the stream"
    if parity.verdict == "explained_by_ttl":
        text += f": only rows of {parity.ttl_expired_keys:,} expired keys differ"
    return text


def rows_text(report: BoundedReport) -> str:
    parts = []
    if report.batch is not None:
        parts.append(f"batch {report.batch.rows:,}")
    if report.stream is not None:
        parts.append(f"stream {report.stream.rows:,} (changelog "
                     f"{report.stream.changelog_rows:,})")
    return ", ".join(parts + [f"late {report.late_rows:,}",
                              f"rejected {report.rejected_rows:,}"])


def summary(console: Console, report: BoundedReport, out: Path, log: Path | None,
            exit_code: int) -> None:
    """The table that ends ``twinflow run``."""
    files = " ".join(Path(p).name for p in report.outputs.values())
    rows = [["ran", f"{', '.join(Path(p).name for p in report.sql)} ({report.mode}, "
                    f"{plural(report.rows_per_batch, 'row')} per micro-batch)"],
            ["parity", parity_text(report.parity)],
            ["rows", rows_text(report)],
            ["outputs", f"{out}/  {files}"]]
    if log is not None:
        rows.append(["log", str(log)])
    rows.append(["exit", f"{exit_code}  ({report.timings_s['total']:.1f} s)"])
    console.line()
    console.table(rows)
