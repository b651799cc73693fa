"""Errors mapped to the CLI's exit codes: 1 parity failed, 2 bad input, unsupported SQL or a
query that fails on its data (as Flink's job fails), 3 damaged state, a failed engine or a bug,
4 the machine (disk full, permission denied, a missing or read-only directory)."""

from __future__ import annotations

import errno
import re

# How the message of an error raised inside a Spark job begins where Flink's job fails on the
# data (sql/functions.data_error): ``classify`` makes it a DataError.
DATA_ERROR = "twinflow data error: "
# ... and where twinflow does not reproduce Flink's answer for a value (sql/functions
# value_refused): a DataError too, saying so.
VALUE_REFUSED = "twinflow refuses the value: "
# How a refused value reads in the error (exit 2): a refusal at run time, not a data error.
NOT_REPRODUCED = "twinflow does not reproduce Flink's answer for "


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


class DataError(TwinflowError):
    """The query fails on its data where Flink's job fails too: a CAST of text that is no
    number, an integer or DECIMAL division by zero. The message names the value."""


class StorageError(TwinflowError):
    """The machine, not the query: a disk full, a permission denied, a missing or read-only
    directory. The message names the path (where known) and the cause."""

    exit_code = 4


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


_STORAGE = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
            errno.EACCES: "permission denied", errno.EPERM: "permission denied",
            errno.EROFS: "read-only file system", errno.ENOENT: "no such file or directory"}
# The same causes as the JVM reports them (java.io / java.nio / Hadoop), with the path that
# precedes or follows them where the message has one.
_JVM_STORAGE = [(re.compile(p), cause) for p, cause in (
    (r"No space left on device|\[Errno 28\]", "no space left on the device"),
    (r"Disk quota exceeded", "disk quota exceeded"),
    (r"(?:AccessDeniedException: (\S+))|Permission denied", "permission denied"),
    (r"(?:ReadOnlyFileSystemException)|Read-only file system", "read-only file system"))]
_JVM_PATH = re.compile(r"(?:file:)?(/[^\s:'\"]+)[:\s]*\(?(?:No space|Permission denied|"
                       r"Read-only|Disk quota)")
_SPARK_DATA = {"DIVIDE_BY_ZERO": "division by zero (Flink's job fails with an "
                                 "ArithmeticException too)",
               "REMAINDER_BY_ZERO": "MOD by zero (Flink's job fails with an "
                                    "ArithmeticException too)"}


def classify(e: BaseException, where: str | None = None) -> TwinflowError | None:
    """What an exception raised while a run's Spark jobs ran means to the user, if it is not a
    bug: the query failing on its data (exit 2) or the machine (exit 4; ``where``: the
    directory the run writes, named when the cause comes without a path). One line."""
    def storage(path: str | None, cause: str) -> StorageError:
        if path:
            return StorageError(f"{path}: {cause}")
        return StorageError(f"{cause} (the run reads its input and writes under {where})"
                            if where else cause)

    if isinstance(e, OSError) and e.errno in _STORAGE:
        return storage(e.filename, _STORAGE[e.errno])
    text = str(e)
    # Spark's error classes, outermost first (a stream's failure wraps its micro-batch's); the
    # query's own text, which may follow, holds no "[CLASS] " of its own.
    for spark_error in re.finditer(r"\[([A-Z_]+)\] (.*)", text):
        name, rest = spark_error.groups()
        if name == "USER_RAISED_EXCEPTION" and rest.startswith((DATA_ERROR, VALUE_REFUSED)):
            refused = rest.startswith(VALUE_REFUSED)
            message = re.sub(r"\s*SQLSTATE: \w+.*$", "",
                             rest[len(VALUE_REFUSED if refused else DATA_ERROR):])
            return DataError(NOT_REPRODUCED + message
                             if refused else
                             f"the query fails on its data, as Flink's job does: {message}")
        if name in _SPARK_DATA:
            return DataError(f"the query fails on its data: {_SPARK_DATA[name]}")
    # A Python UDF's failure, raised in its Python worker (udf/calls.py).
    if udf := re.search(rf"UdfFailed: ({re.escape(DATA_ERROR)}|{re.escape(VALUE_REFUSED)})(.*)",
                        text):
        marker, message = udf.groups()
        return DataError(NOT_REPRODUCED + message
                         if marker == VALUE_REFUSED else
                         f"the query fails on its data, as Flink's job does: {message}")
    for pattern, cause in _JVM_STORAGE:
        if found := pattern.search(text):
            path = (found.groups() or (None,))[0] or (m.group(1) if (
                m := _JVM_PATH.search(text)) else None)
            return storage(path, cause)
    return None
