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
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

import fsspec
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from fsspec.implementations.arrow import ArrowFSWrapper
from upath import UPath
from upath.implementations.hdfs import HDFSPath
from upath.registry import register_implementation

from operators_lib.errors import InputError
from operators_lib.io import remote, uris
from operators_lib.io.remote import Store, WebHDFSClient, webhdfs_address

Place = Path | UPath
# The process's Store: the one ``place`` gives a URI without a Store of its own (``use``).
_store = Store()


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


class _HDFSPath(HDFSPath):
    """universal_pathlib's HDFS path, whose ``str()`` keeps the namenode (Spark needs it)."""

    __slots__ = ()

    def __str__(self) -> str:
        host, port = self.storage_options.get("host", ""), self.storage_options.get("port")
        return f"hdfs://{host}{f':{port}' if port else ''}{self.path}"


fsspec.register_implementation("s3a", _S3, clobber=True)
fsspec.register_implementation("hdfs", _HDFS, clobber=True)
register_implementation("hdfs", _HDFSPath, clobber=True)


def use(store: Store) -> None:
    """Reach stores through ``store`` from now on in this process: a Spark application's
    session settings (engine/stores.store_of), an Airflow task's query settings."""
    global _store
    _store = store


def store() -> Store:
    """The process's Store (``use``)."""
    return _store


def place(given: str | Path, what: str, store: Store | None = None) -> Place:
    """``given`` (a local path or a URI) as a place to keep state or outputs, reached through
    ``store`` (else the process's: ``use``); a URI of another scheme is an InputError naming
    ``what`` it is for."""
    where = uris.location(given, what)
    if isinstance(where, Path):
        return where
    return UPath(where, store=store or _store)


def bound(place: Place, store: Store) -> Place:
    """``place`` reached through ``store`` (a local path as is)."""
    return place if isinstance(place, Path) else UPath(str(place), store=store)


def reachable(place: Place, what: str) -> Place:
    """``place``, once its store has answered; else an InputError naming it (never a key),
    within seconds (io/remote.py bounds the clients' timeouts and attempts)."""
    if not isinstance(place, Path):
        try:
            place.exists()
        except OSError as e:
            raise InputError(f"{what} {place}: the store does not answer ({e})") from None
    return place


def renames(place: Place) -> bool:
    """Whether ``place``'s store renames a directory in one step (not S3)."""
    return isinstance(place, Path) or place.protocol == "hdfs"


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


def copy(source: Place, target: Place) -> None:
    """File ``source`` copied to ``target`` on the same store (S3: a server-side copy)."""
    if isinstance(source, Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    else:
        source.fs.copy(source.path, target.path)


def files(root: Place) -> list[str]:
    """The files under directory ``root`` at any depth, as paths relative to it (one
    listing on a store), in order; none if it is not a directory (a store's listing of a file
    names the file itself: callers that copy a file and a directory's files would copy it
    twice)."""
    if isinstance(root, Path):
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    base = root.path.rstrip("/")
    return sorted(f[len(base) + 1:] for f in root.fs.find(base)) if root.is_dir() else []


def link_or_copy(source: Place, target: Place) -> None:
    """``target`` as a hard link to the immutable file ``source``; a copy where the file
    system cannot link (a store, another local file system)."""
    if isinstance(source, Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    copy(source, target)


def move_tree(source: Place, target: Place) -> None:
    """File or directory ``source`` moved to ``target`` (which must not exist): one rename
    where the store has one, else (S3) each file copied, then ``source`` removed."""
    if renames(source):
        replace(source, target)
        return
    if source.is_dir():
        for name in files(source):
            copy(source / name, target / name)
    else:
        copy(source, target)
    rmtree(source)


def parquet_rows(directory: Place) -> int:
    """The rows of a directory of Parquet files, from their footers."""
    rows = 0
    for name in files(directory):
        if name.endswith(".parquet"):
            with open_input(directory / name) as fh:
                rows += pq.ParquetFile(fh).metadata.num_rows
    return rows


def arrow(place: Place) -> tuple[pafs.FileSystem, str]:
    """``place`` for pyarrow: its file system and the path on it."""
    if isinstance(place, Path):
        return pafs.LocalFileSystem(), str(place.absolute())
    return remote.split(str(place), place.storage_options.get("store"))


def move(fs: pafs.FileSystem, source: str, target: str) -> None:
    """pyarrow's ``move`` of a file onto ``target``, which may exist (an HDFS rename does not
    replace it)."""
    if isinstance(fs, pafs.PyFileSystem) and fs.get_file_info(target).is_file:
        fs.delete_file(target)
    fs.move(source, target)


def open_input(place: Place) -> pa.NativeFile:
    """A file for pyarrow to read (random access: a Parquet footer)."""
    fs, path = arrow(place)
    return fs.open_input_file(path)


def open_output(place: Place) -> pa.NativeFile:
    """A file for pyarrow to write (on S3 it appears whole when closed)."""
    fs, path = arrow(place)
    return fs.open_output_stream(path)


@contextmanager
def whole_dir(final: Place, marker: str) -> Iterator[Place]:
    """A directory that appears whole: yields where to write it, its file ``marker`` last.
    Where the store renames a directory (a local disk, HDFS) that is a sibling, renamed onto
    ``final`` (replacing it) when the block ends, dropped if it raises. On S3 it is ``final``
    itself, its ``marker`` removed first and then the rest: a reader takes the directory only
    with its marker (a failed block leaves it without one)."""
    if not renames(final):
        (final / marker).unlink(missing_ok=True)
        rmtree(final)
        yield final
        return
    tmp = final.parent / f".{final.name}.tmp"
    rmtree(tmp)
    try:
        yield tmp
    except BaseException:
        rmtree(tmp)
        raise
    rmtree(final)
    replace(tmp, final)


@contextmanager
def writing(targets: list[Place], mode: int | None = None) -> Iterator[list[BinaryIO]]:
    """Files written whole: each of ``targets`` opened as a temp file, put in place when the
    block ends without an error, dropped when it raises; a reader never sees half a file. A
    local temp is beside its target and renamed onto it, with permissions ``mode``, else a new
    file's (0666 less the umask; mkstemp's own are 0600, which would hide published results
    from a reader running as another user). On a store it is a local temp file, uploaded when
    the block ends: on S3 one upload appears whole, on HDFS an upload beside the target is
    renamed onto it."""
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmps: list[tuple[str, Place]] = []
    try:
        with ExitStack() as stack:
            outs = []
            for target in targets:
                if isinstance(target, Path):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
                else:
                    fd, tmp = tempfile.mkstemp(prefix=f"twinflow-{target.name}.")
                tmps.append((tmp, target))
                outs.append(stack.enter_context(os.fdopen(fd, "wb")))
            yield outs
        for tmp, target in tmps:
            if isinstance(target, Path):
                os.chmod(tmp, mode)
                os.replace(tmp, target)
            else:
                _upload(Path(tmp), target)
    finally:
        for tmp, _ in tmps:
            Path(tmp).unlink(missing_ok=True)


def _upload(local: Path, target: UPath) -> None:
    fs, path = arrow(target)
    if target.protocol == "hdfs":  # beside it, then renamed onto it
        path, final = f"{path}.{uuid.uuid4().hex}.tmp", path
    with open(local, "rb") as source, fs.open_output_stream(path) as out:
        shutil.copyfileobj(source, out, 1 << 20)
    if target.protocol == "hdfs":
        move(fs, path, final)
