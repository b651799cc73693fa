"""Where twinflow keeps a query's state and its outputs: a local path, or an ``s3a://`` /
``hdfs://`` URI, as one path type with pathlib's interface (universal_pathlib's ``UPath``; a
local one stays a ``pathlib.Path``) over the clients that twinflow's driver and tasks read
input with (io/remote.py): pyarrow's S3 client set up from the s3a connector's settings, and
WebHDFS for HDFS. ``str()`` of one is the URI Spark reads and writes; a copy sent to a task
reaches the store there as it does in the driver (the ``Store`` travels with it; its keys are
never in a ``repr``).

pathlib's interface has no answer on a store for two things, which are functions here:
``rmtree`` and ``replace``. A file is replaced whole on every store (S3: one PUT or one
server-side copy is atomic; HDFS: a rename); a directory is replaced in one rename only where
there is one (a local disk, HDFS), never on S3, where a commit protocol stands in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import fsspec
from fsspec.implementations.arrow import ArrowFSWrapper
from upath import UPath

from operators_lib.io import uris
from operators_lib.io.remote import Store, WebHDFSClient, webhdfs_address

Place = Path | UPath


class _S3(ArrowFSWrapper):
    """``s3a://`` for universal_pathlib: pyarrow's S3 client of a ``Store``."""

    protocol = ("s3a",)
    root_marker = ""  # pyarrow's S3 paths are bucket/key

    def __init__(self, store: Store | None = None, **kwargs: object) -> None:
        super().__init__((store or Store()).filesystem(), **kwargs)

    @classmethod
    def _parent(cls, path: str) -> str:  # universal_pathlib calls it on the class
        path = cls._strip_protocol(path).rstrip("/")
        return path.rsplit("/", 1)[0] if "/" in path else ""


class _HDFS(WebHDFSClient):
    """``hdfs://namenode:port/...`` for universal_pathlib: WebHDFS at the namenode's HTTP
    address that the ``Store`` knows."""

    protocol = ("hdfs",)

    def __init__(self, host: str = "", port: int | None = None, store: Store | None = None,
                 **kwargs: object) -> None:
        store = store or Store()
        http_host, http_port, user = webhdfs_address(
            store, f"{host}:{port}" if port else host)
        super().__init__(http_host, http_port, user=user, **kwargs)


fsspec.register_implementation("s3a", _S3, clobber=True)
fsspec.register_implementation("hdfs", _HDFS, clobber=True)


def place(given: str | Path, what: str, store: Store | None = None) -> Place:
    """``given`` (a local path or a URI) as a place to keep state or outputs; a URI of another
    scheme is an InputError naming ``what`` it is for."""
    where = uris.location(given, what)
    if isinstance(where, Path):
        return where
    return UPath(where, store=store or Store())


def is_local(place: Place) -> bool:
    return isinstance(place, Path)


def rmtree(place: Place) -> None:
    """``place`` and everything under it, if it exists."""
    if isinstance(place, Path):
        shutil.rmtree(place, ignore_errors=True)
    elif place.exists():
        place.fs.rm(place.path, recursive=True)


def replace(source: Place, target: Place) -> None:
    """Move file ``source`` to ``target``, replacing it whole (readers see the old or the new
    file); a directory only where one rename does it (not S3: ValueError)."""
    if isinstance(source, Path) and isinstance(target, Path):
        os.replace(source, target)
        return
    if source.protocol == "s3a" and source.is_dir():
        raise ValueError(f"S3 cannot replace a directory in one step: {source}")
    if source.protocol == "hdfs" and target.exists():  # an HDFS rename does not replace
        rmtree(target)
    source.fs.mv(source.path, target.path)
