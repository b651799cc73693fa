"""What ``twinflow run`` and ``twinflow demo`` print: one line per step, a progress line while a
step runs, a summary table; everything the engines print goes to a log file (``--verbose``:
to the console).

Spark's JVM and its Python workers write to the stderr they inherit, and pyspark's
transformWithState workers ``print()`` there whatever the log level; Airflow's ``dag.test()``
and Great Expectations write to this process's stdout and stderr. Only a redirection at the
file-descriptor level, made before the JVM starts, reaches all of them: ``engine_output_to``
points fds 1 and 2 of this process (so also of every process it starts) at the log, and gives
the console its own copies of the original stdout and stderr.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

LABEL = 7  # width of the step label column
TICK_S = 1.0  # a progress line on a terminal is redrawn this often
EVERY_S = 10.0  # elsewhere (a log, a pipe): a progress line when it changed, at most this often
HEARTBEAT_S = 60.0  # ... or when it did not change for this long


class Console:
    """Step lines, warnings and errors, and one progress line: redrawn in place on a terminal
    (with the step's elapsed time), otherwise written as a line of its own now and then
    (``EVERY_S``, ``HEARTBEAT_S``)."""

    def __init__(self, out: TextIO, err: TextIO, progress: bool = True) -> None:
        self.out, self.err = out, err
        self._progress = progress
        self._tty = progress and out.isatty()
        self._lock = threading.RLock()
        self._activity: tuple[str, str, float] | None = None  # label, text, start
        self._drawn = False  # a progress line is on the terminal
        self._last_line = time.monotonic()
        self._last_progress: tuple[str, str] | None = None  # label, text of the last one written
        self._stop = threading.Event()

    def step(self, label: str, text: str) -> None:
        """A finished step: its line stays."""
        with self._lock:
            self._activity = None
            self._print(self.out, f"{label:<{LABEL}} {text}")

    def activity(self, label: str, text: str) -> None:
        """What runs now (replaces the previous progress; its clock restarts with a new label)."""
        if not self._progress:
            return
        with self._lock:
            start = time.monotonic()
            if self._activity and self._activity[0] == label:
                start = self._activity[2]
            self._activity = (label, text, start)
            self._draw()

    def warn(self, message: str) -> None:
        with self._lock:
            self._print(self.err, f"twinflow: warning: {message}")

    def error(self, message: str) -> None:
        with self._lock:
            self._print(self.err, message)

    def table(self, rows: list[list[str]], header: list[str] | None = None) -> None:
        """Left-aligned columns, two spaces apart (a header row is underlined)."""
        body = [header, ["-" * len(h) for h in header], *rows] if header else rows
        widths = [max(len(r[i]) for r in body if i < len(r)) for i in range(len(body[0]))]
        with self._lock:
            self._activity = None
            for r in body:
                self._print(self.out, "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())

    def line(self, text: str = "") -> None:
        with self._lock:
            self._print(self.out, text)

    @contextmanager
    def ticking(self) -> Iterator[Console]:
        """Redraw the progress line from a thread while the body runs (steps that report
        nothing for a while, e.g. Spark's start or an Airflow DAG run, still show time passing).
        """
        if not self._progress:
            yield self
            return
        self._stop.clear()
        thread = threading.Thread(target=self._tick, name="twinflow-console", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
            with self._lock:
                self._clear()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        if self._activity is None:
            return
        label, text, start = self._activity
        now = time.monotonic()
        line = f"{label:<{LABEL}} {text}  {now - start:.0f} s"
        if self._tty:  # cut to the width: a wrapped line would not be redrawn in place
            self.out.write(f"\r\x1b[K{line[:self._width() - 1]}")
            self.out.flush()
            self._drawn = True
            return
        quiet_for = now - self._last_line
        if quiet_for >= HEARTBEAT_S or (quiet_for >= EVERY_S
                                        and self._last_progress != (label, text)):
            self._print(self.out, line)
            self._last_progress = (label, text)

    def _width(self) -> int:
        try:  # self.out's terminal: fd 1 may point at the log
            return os.get_terminal_size(self.out.fileno()).columns
        except (OSError, ValueError):
            return 80

    def _clear(self) -> None:
        if self._drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self._drawn = False

    def _print(self, stream: TextIO, text: str) -> None:
        self._clear()
        if stream is not self.out:
            self.out.flush()
        print(text, file=stream, flush=True)
        self._last_line = time.monotonic()


@contextmanager
def engine_output_to(log: Path | None) -> Iterator[tuple[TextIO, TextIO]]:
    """Send fds 1 and 2 to ``log`` (truncated) while the body runs, and yield streams to the
    original stdout and stderr. Processes started meanwhile (the Spark JVM) keep writing to the
    log after the body. ``log=None``: no redirection (``--verbose``)."""
    if log is None:
        yield sys.stdout, sys.stderr
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    out, err = _original(sys.stdout, 1, saved[1]), _original(sys.stderr, 2, saved[2])
    target = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield out, err
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        os.close(target)
        for stream in (out, err):
            if stream not in (sys.stdout, sys.stderr):
                stream.close()


def _original(stream: TextIO, fd: int, saved: int) -> TextIO:
    """A stream to where ``stream`` wrote before the redirection: ``stream`` itself when it is
    not backed by ``fd`` (pytest's capture, for instance), else a copy of the saved fd."""
    try:
        if stream.fileno() != fd:
            return stream
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return stream
    return os.fdopen(os.dup(saved), "w", buffering=1, encoding=stream.encoding,
                     errors="backslashreplace")
