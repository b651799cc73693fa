"""Errors mapped to the CLI's exit codes: 1 parity failed, 2 bad input or unsupported SQL,
3 damaged state or a failed engine."""

from __future__ import annotations


class TwinflowError(Exception):
    """Base class; ``exit_code`` is what the CLI returns."""

    exit_code = 2


class InputError(TwinflowError):
    """A missing file, a CSV whose header does not match its table, a bad command-line value."""


class SqlError(TwinflowError):
    """Unsupported or invalid SQL; the message names the construct and its line."""

    def __init__(self, message: str, line: int | None = None, source: str | None = None):
        where = ""
        if source or line:
            where = f" ({source or 'sql'}{f', line {line}' if line else ''})"
        super().__init__(f"{message}{where}")
        self.line = line
        self.source = source


class ParityError(TwinflowError):
    """Stream and batch results differ in a way that late rows do not explain."""

    exit_code = 1


class StateError(TwinflowError):
    """A run's state is incomplete or inconsistent (a changelog segment missing, a retraction of
    a row that is not present): damage or a bug, never to be answered with a result."""

    exit_code = 3


class EngineError(TwinflowError):
    """The Spark engine failed (its driver JVM died); the message says what to change."""

    exit_code = 3


def state_check_failed(report: dict) -> bool:
    """Does a state command's report fail it (exit 1, as a failed parity): ``verify`` found
    the snapshot's result differs from the live one, or a compaction sweep changed the
    result."""
    return report.get("verdict") == "differs" or bool(report.get("result_rows_changed"))
