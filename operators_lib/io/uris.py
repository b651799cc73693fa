"""Which locations twinflow reads input from (io/remote.py reaches them): local paths,
``file:``, ``s3a://`` / ``s3://`` and ``hdfs://`` URIs. Imports nothing heavy: the DAG files
read query configs with it."""

from __future__ import annotations

import re
from pathlib import Path

from operators_lib.errors import InputError

S3 = re.compile(r"^s3a?://", re.IGNORECASE)
HDFS = re.compile(r"^hdfs://([^/]*)", re.IGNORECASE)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def location(given: str | Path, what: str) -> Path | str:
    """A path or URI as twinflow reads it: a local path (also a ``file:`` URI) as a Path, an
    S3 URI as ``s3a://...``, an HDFS URI as is; any other URI is an InputError naming
    ``what`` it is for."""
    text = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*):/(?!/)", r"\1://", str(given))  # Path folds //
    if S3.match(text):
        return S3.sub("s3a://", text)
    if HDFS.match(text):
        return text
    scheme = _SCHEME.match(text)
    if scheme and scheme.group(1).lower() == "file":
        return Path(re.sub(r"^file:(//)?", "", text))
    if scheme and len(scheme.group(1)) > 1:  # not a Windows drive letter
        raise InputError(f"{what} {text!r} is a URI twinflow does not read yet: a local "
                         "path, S3 (s3a://, s3://) or HDFS (hdfs://) may be; GCS and ABFS are "
                         "not built yet")
    return Path(given)


def table_path(given: str, what: str, base: Path | None) -> Path | str:
    """A WITH clause's ``'path'`` (``location``), a relative local one from ``base``: the
    folder of the SQL file that declares the table."""
    where = location(given, what)
    if isinstance(where, Path) and not where.is_absolute() and base is not None:
        return base / where
    return where
