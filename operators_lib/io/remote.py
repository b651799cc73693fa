"""Input files wherever they are: a local path, an ``s3a://`` / ``s3://`` URI on an
S3-compatible store (pyarrow's S3 client) or an ``hdfs://`` URI (WebHDFS, the namenode's HTTP
interface, through fsspec), read by the driver (listing, a file's size, a header line, a
Parquet footer, an Avro header: no rows) and by the tasks (their pieces). Python tasks have no
JVM, hence no Hadoop FileSystem: these clients reach the same files Spark reaches, configured
from the same Hadoop settings.

``Store`` is made from Hadoop settings (io/hadoop_conf.py): for S3, ``fs.s3a.endpoint``,
``fs.s3a.endpoint.region``, ``fs.s3a.path.style.access``, ``fs.s3a.connection.ssl.enabled``,
``fs.s3a.access.key`` / ``fs.s3a.secret.key`` / ``fs.s3a.session.token`` (without keys, the
AWS SDK's own chain: the standard environment variables, the profile, an instance role);
for HDFS, each namenode's ``dfs.namenode.http-address`` and the user (``HADOOP_USER_NAME``, else
the OS user: Hadoop's simple authentication). Credentials are configured once, where Spark
users keep them, and never appear in a ``repr``, a log line or an error. A store that does
not answer is an error within seconds (bounded connect and request timeouts, three attempts),
naming the URI.
"""

from __future__ import annotations

import functools
import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow.fs as pafs
import requests
from fsspec.implementations.webhdfs import WebHDFS

from operators_lib.errors import InputError
from operators_lib.io.uris import HDFS, S3

WEBHDFS_PORT = 9870  # a namenode's HTTP port when the configuration names none (Hadoop 3)
HDFS_PORT = 8020


@dataclass(frozen=True)
class Store:
    """How to reach an S3-compatible store (module docstring)."""

    endpoint: str | None = None
    region: str | None = None
    path_style: bool = False
    ssl: bool = True
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    # HDFS: (namenode "host:port", its WebHDFS "host:port"), and who reads
    namenodes: tuple[tuple[str, str], ...] = ()
    hdfs_user: str | None = None
    hdfs_auth: str = "simple"  # hadoop.security.authentication

    def filesystem(self) -> pafs.S3FileSystem:
        endpoint = self.endpoint
        scheme = "https" if self.ssl else "http"
        if endpoint and "://" in endpoint:
            scheme, endpoint = endpoint.split("://", 1)
        return pafs.S3FileSystem(
            access_key=self.access_key, secret_key=self.secret_key,
            session_token=self.session_token,
            region=self.region or "us-east-1", endpoint_override=endpoint, scheme=scheme,
            force_virtual_addressing=not self.path_style, connect_timeout=5,
            request_timeout=30, retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=3))


    def webhdfs(self, authority: str) -> pafs.FileSystem:
        """The namenode ``authority`` (``host[:port]``) through WebHDFS."""
        host, port, user = webhdfs_address(self, authority)
        return pafs.PyFileSystem(pafs.FSSpecHandler(WebHDFSClient(host, port, user=user)))


def webhdfs_address(store: Store, authority: str) -> tuple[str, int, str]:
    """The WebHDFS host and port of namenode ``authority`` (``host[:port]``, as an hdfs://
    URI names it), and the user who reads."""
    if store.hdfs_auth != "simple":
        raise InputError(f"the Hadoop configuration asks for {store.hdfs_auth} "
                         "authentication: twinflow reads HDFS through WebHDFS with simple "
                         "authentication only (Kerberos is not built yet)")
    host, _, port = authority.partition(":")
    known = dict(store.namenodes)
    http = known.get(authority) or known.get(f"{host}:{port or HDFS_PORT}")
    http_host, _, http_port = (http or f"{host}:{WEBHDFS_PORT}").rpartition(":")
    user = store.hdfs_user or os.environ.get("HADOOP_USER_NAME") or getpass.getuser()
    return http_host or host, int(http_port), user


class WebHDFSClient(WebHDFS):
    """fsspec's WebHDFS client with bounded connect and read timeouts (requests has none)."""

    def _connect(self) -> None:
        super()._connect()
        self.session.request = functools.partial(self.session.request, timeout=(5, 60))


def is_remote(location: str | Path) -> bool:
    return isinstance(location, str) and bool(S3.match(location) or HDFS.match(location))


def split(uri: str, store: Store | None) -> tuple[pafs.FileSystem, str]:
    if not is_remote(uri):
        return pafs.LocalFileSystem(), str(uri)
    if hdfs := HDFS.match(uri):
        return (store or Store()).webhdfs(hdfs.group(1)), uri[hdfs.end():] or "/"
    return (store or Store()).filesystem(), S3.sub("", uri)


def _failed(uri: str, e: Exception) -> InputError:
    """An error naming the URI (pyarrow's messages name the bucket and key, never the
    credentials)."""
    if isinstance(e, requests.ConnectionError) and (url := getattr(e.request, "url", None)):
        address = url.split("://", 1)[-1].split("/", 1)[0]
        return InputError(f"cannot read {uri}: its namenode's WebHDFS at {address} does not "
                          "answer (the Hadoop setting dfs.namenode.http-address says where it "
                          "listens)")
    return InputError(f"cannot read {uri}: {e}")


def walk(root: Path | str, store: Store | None, recursive: bool,
         skip: Callable[[str, bool], bool] = lambda name, is_dir: False,
         after: tuple[str, ...] = ()) -> list[tuple[Any, int, float]]:
    """(location, size, modification time) of the files under ``root`` in path order,
    folder by folder (a location: a Path under a local root, else a URI); a root that is one
    file gives it alone, an absent one nothing. ``skip(name, is_dir)``: an entry left out
    (a folder: not entered). ``after``: the path, relative to ``root``, of a file whose
    folders and the folders before them are closed: at each level only the folders named
    from its folder's name on are entered (files are all listed)."""
    if isinstance(root, Path):
        fs, path, prefix = pafs.LocalFileSystem(), str(root.absolute()), ""
    else:
        fs, path = split(root, store)
        prefix = root[:len(root) - len(path)]
    found: list[tuple[Any, int, float]] = []

    def visit(directory: str, closed: tuple[str, ...]) -> None:
        if recursive and not closed:  # the whole subtree: one flat listing on S3
            for f in fs.get_file_info(pafs.FileSelector(directory, recursive=True)):
                parts = f.path[len(directory):].strip("/").split("/")
                if f.type == pafs.FileType.File and not any(
                        skip(part, True) for part in parts[:-1]) and not skip(parts[-1], False):
                    found.append((prefix + f.path, f.size, _mtime(f)))
            return
        for f in fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True)):
            is_dir = f.type == pafs.FileType.Directory
            if skip(f.base_name, is_dir):
                continue
            if is_dir:
                if recursive and not (len(closed) > 1 and f.base_name < closed[0]):
                    visit(f.path, closed[1:] if closed and f.base_name == closed[0] else ())
            elif f.type == pafs.FileType.File:
                found.append((prefix + f.path, f.size, _mtime(f)))

    try:
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            return [(root, info.size, _mtime(info))]
        if info.type == pafs.FileType.Directory:
            visit(path.rstrip("/") or "/", after)
    except OSError as e:
        raise _failed(str(root), e) from None
    found.sort(key=lambda f: f[0].split("/"))
    if isinstance(root, Path):  # under the root as given (relative stays relative)
        return [(root / Path(location).relative_to(path), size, mtime)
                for location, size, mtime in found]
    return found


def _mtime(info: pafs.FileInfo) -> float:
    return info.mtime.timestamp() if info.mtime else 0.0


def stat(location: str | Path, store: Store | None) -> tuple[int, float]:
    """A file's size and modification time."""
    if not is_remote(location):
        st = Path(location).stat()
        return st.st_size, st.st_mtime
    fs, path = split(str(location), store)
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
    fs, path = split(str(location), store)
    try:
        return fs.open_input_file(path)
    except OSError as e:
        raise _failed(str(location), e) from None


def read_range(location: str, start: int, end: int, store: Store | None) -> bytes:
    """Bytes [start, end) of a file, read where the task runs."""
    fs, path = split(location, store)
    with fs.open_input_file(path) as fh:
        return fh.read_at(end - start, start)
