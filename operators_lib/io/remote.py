"""Input files wherever they are: a local path, or an ``s3a://`` / ``s3://`` URI on an
S3-compatible store, read through pyarrow's S3 client by the driver (listing, a file's size,
a header line, a Parquet footer, an Avro header: no rows) and by the tasks (their pieces).

The store is reached as Spark's s3a connector reaches it: ``Store`` is made from the Hadoop
configuration (``fs.s3a.endpoint``, ``fs.s3a.endpoint.region``, ``fs.s3a.path.style.access``,
``fs.s3a.connection.ssl.enabled``, ``fs.s3a.access.key`` / ``fs.s3a.secret.key``; without keys,
the AWS SDK's own chain: the standard environment variables, the profile, an instance role),
so credentials are configured once, where Spark users keep them. Their values never appear in
a ``repr``, a log line or an error. A store that does not answer is an error within seconds
(bounded connect and request timeouts, three attempts), naming the URI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyarrow.fs as pafs

from operators_lib.errors import InputError

S3 = re.compile(r"^s3a?://", re.IGNORECASE)


@dataclass(frozen=True)
class Store:
    """How to reach an S3-compatible store (module docstring)."""

    endpoint: str | None = None
    region: str | None = None
    path_style: bool = False
    ssl: bool = True
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)

    def filesystem(self) -> pafs.S3FileSystem:
        endpoint = self.endpoint
        scheme = "https" if self.ssl else "http"
        if endpoint and "://" in endpoint:
            scheme, endpoint = endpoint.split("://", 1)
        return pafs.S3FileSystem(
            access_key=self.access_key, secret_key=self.secret_key,
            region=self.region or "us-east-1", endpoint_override=endpoint, scheme=scheme,
            force_virtual_addressing=not self.path_style, connect_timeout=5,
            request_timeout=30, retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=3))


def is_remote(location: str | Path) -> bool:
    return isinstance(location, str) and bool(S3.match(location))


def _split(uri: str, store: Store | None) -> tuple[pafs.FileSystem, str]:
    if not is_remote(uri):
        return pafs.LocalFileSystem(), str(uri)
    return (store or Store()).filesystem(), S3.sub("", uri)


def _failed(uri: str, e: Exception) -> InputError:
    """An error naming the URI (pyarrow's messages name the bucket and key, never the
    credentials)."""
    return InputError(f"cannot read {uri}: {e}")


def list_files(root: str, store: Store | None, recursive: bool) -> list[tuple[str, int, float]]:
    """(URI, size, modification time) of the files under ``root`` (a prefix), in URI
    order; a root that is one file gives it alone."""
    fs, path = _split(root, store)
    prefix = root[:len(root) - len(path)]
    try:
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            return [(root, info.size, info.mtime.timestamp() if info.mtime else 0.0)]
        found = fs.get_file_info(pafs.FileSelector(path.rstrip("/"), recursive=recursive,
                                                   allow_not_found=True))
    except OSError as e:
        raise _failed(root, e) from None
    return sorted((prefix + f.path, f.size, f.mtime.timestamp() if f.mtime else 0.0)
                  for f in found if f.type == pafs.FileType.File)


def stat(location: str | Path, store: Store | None) -> tuple[int, float]:
    """A file's size and modification time."""
    if not is_remote(location):
        st = Path(location).stat()
        return st.st_size, st.st_mtime
    fs, path = _split(str(location), store)
    try:
        info = fs.get_file_info(path)
    except OSError as e:
        raise _failed(str(location), e) from None
    if info.type != pafs.FileType.File:
        raise InputError(f"input not found: {location}")
    return info.size, info.mtime.timestamp() if info.mtime else 0.0


def open_input(location: str | Path, store: Store | None) -> BinaryIO:
    """A file opened for random access (a header, a footer)."""
    if not is_remote(location):
        return open(location, "rb")
    fs, path = _split(str(location), store)
    try:
        return fs.open_input_file(path)
    except OSError as e:
        raise _failed(str(location), e) from None


def read_range(location: str, start: int, end: int, store: Store | None) -> bytes:
    """Bytes [start, end) of a file, read where the task runs."""
    fs, path = _split(location, store)
    with fs.open_input_file(path) as fh:
        return fh.read_at(end - start, start)
