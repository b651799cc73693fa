"""A real S3-compatible server on the loopback interface: moto's stand-alone server (an HTTP
server that the s3a connector and pyarrow talk to as to S3), from a virtualenv of its own
(moto needs a python-dateutil older than Airflow's), built once with uv into
``~/.cache/twinflow/moto-<version>``.

    with S3Server() as s3:             # s3.endpoint: http://127.0.0.1:PORT
        s3.bucket("data")
        session_conf(spark, s3.hadoop_conf())   # fs.s3a.*: path-style access, test keys
"""

from __future__ import annotations

import contextlib
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from operators_lib.io.remote import Store
from tests.cluster import free_port, stop

MOTO = "moto[s3,server]==5.2.5"
VENV = Path.home() / ".cache" / "twinflow" / "moto-5.2.5"
ACCESS_KEY, SECRET_KEY = "twinflow-test", "twinflow-test-secret"


def _python() -> Path:
    """The moto virtualenv's Python, built the first time."""
    python = VENV / "bin" / "python"
    if not (VENV / ".ready").exists():
        uv = Path(sys.executable).parent / "uv"
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, VENV], check=True)
        subprocess.run([uv, "pip", "install", "-q", "--python", python, MOTO], check=True)
        (VENV / ".ready").touch()
    return python


class S3Server:
    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> S3Server:
        self.proc = subprocess.Popen(
            [_python(), "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2)
                return self
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.__exit__()
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.2)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop([self.proc], timeout=10)
            self.proc = None

    def bucket(self, name: str) -> None:
        """Create a bucket (an S3 PUT Bucket request, as any client sends it)."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        urllib.request.urlopen(request, timeout=10)

    def store(self) -> Store:
        """How twinflow reaches this server (its endpoint and the test keys)."""
        return Store(endpoint=self.endpoint, path_style=True, access_key=ACCESS_KEY,
                     secret_key=SECRET_KEY)

    def hadoop_conf(self) -> dict[str, str]:
        """The s3a connector's settings for this server, as session settings (Spark gives
        them to the Hadoop FileSystem of each read and write; not cached: each server has
        a port of its own)."""
        return {"fs.s3a.endpoint": self.endpoint, "fs.s3a.path.style.access": "true",
                "fs.s3a.access.key": ACCESS_KEY, "fs.s3a.secret.key": SECRET_KEY,
                "fs.s3a.endpoint.region": "us-east-1",
                "fs.s3a.connection.ssl.enabled": "false", "fs.s3a.impl.disable.cache": "true",
                # moto's HTTP server answers the upload of a local file (RocksDB's files in a
                # checkpoint) with a status the AWS SDK fails on
                "fs.s3a.optimized.copy.from.local.enabled": "false"}


class Gateway:
    """A TCP forwarder on loopback in front of a server, to take it away and give it back
    as a network does: ``down()`` resets every open connection and refuses new ones (the
    port closed), ``up()`` listens on the same port again. The server keeps its data.

        with Gateway(s3.port) as gw:   # gw.endpoint: http://127.0.0.1:OTHER_PORT
    """

    def __init__(self, port: int) -> None:
        self.target, self.port = port, free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def __enter__(self) -> Gateway:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            doomed, self._open = self._open, set()
        if listener is not None:
            listener.close()
        for s in doomed:  # a reset, as a dropped link gives
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            # close() alone neither wakes a pipe thread blocked in recv() nor, while that
            # call holds the socket, sends the reset: the peer would wait for its read
            # timeout (s3a's: 200 s). shutdown(SHUT_RD) wakes it and sends nothing.
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RD)
            s.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by down()
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._open |= {client, server}
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(1 << 16):
                sink.sendall(data)
            with self._lock:
                if sink in self._open:  # the peer closed its side; not down()
                    sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass
