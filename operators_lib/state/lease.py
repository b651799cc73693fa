"""A lease on a query's state on a store (S3, HDFS), where no advisory lock exists: one run or
state command at a time holds it (state/lifecycle.locked).

The lease is a small JSON file, ``.lease``, in the state directory: its holder (a random id,
its host and process), and until when it holds it. The holder renews it every ``RENEW_S``
seconds for ``LEASE_S`` more, from a thread of its own, and removes it when it is done. A
holder killed (kill -9, a lost machine) renews it no more: it lapses ``LEASE_S`` seconds after
its last renewal, and the next run takes it over. A run that finds the lease held waits for it
to lapse (a retried task after its predecessor was killed: at most ``LEASE_S``), and fails
(exit 2, naming the holder) if it is renewed meanwhile: another run is alive.

Taking a lease is write, then read back after ``SETTLE_S``: S3 and HDFS read what was last
written (strong read-after-write consistency), so of two runs that wrote at once both read the
same holder, and the other one backs off. Two runs whose checks straddle each other's
read-back by more than ``SETTLE_S`` could both proceed; Airflow's one run at a time per query
remains the first guard. The holder's clock says until when it holds the lease: the hosts'
clocks must agree to within ``LEASE_S - RENEW_S`` seconds (NTP does).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from operators_lib.errors import InputError
from operators_lib.io.output import write_json
from operators_lib.io.storage import Place

LEASE = ".lease"
LEASE_S = 60.0   # a lease not renewed for this long has lapsed
RENEW_S = 15.0   # how often its holder renews it
SETTLE_S = 1.0   # between writing a lease and reading it back

log = logging.getLogger(__name__)


@contextmanager
def leased(state: Place) -> Iterator[None]:
    """Hold the lease on ``state`` for the block (module docstring)."""
    lease = state / LEASE
    me = {"holder": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid()}
    deadline = time.time() + LEASE_S + RENEW_S
    while True:
        held = _read(lease)
        if held is None or held["until"] < time.time():  # free, or lapsed
            write_json(lease, {**me, "until": time.time() + LEASE_S})
            time.sleep(SETTLE_S)
            held = _read(lease)
            if held is not None and held["holder"] == me["holder"]:
                break
            if held is None:
                continue
        if time.time() > deadline:
            raise InputError(f"{state} is in use by another run or `twinflow state` command "
                             f"(host {held['host']}, process {held['pid']}, its lease renewed "
                             f"until {_when(held['until'])}); try again when it has ended")
        time.sleep(min(RENEW_S, max(0.0, held["until"] - time.time()) + 0.1))
    done = threading.Event()
    renewer = threading.Thread(target=_renew, args=(lease, me, done), daemon=True,
                               name="twinflow-lease")
    renewer.start()
    try:
        yield
    finally:
        done.set()
        renewer.join(RENEW_S)  # (a renewal waiting on an unreachable store: let it be)
        try:
            held = _read(lease)
            if held is not None and held["holder"] == me["holder"]:
                lease.unlink()
        except OSError:  # the store is away: the lease lapses by itself
            pass


def _renew(lease: Place, me: dict, done: threading.Event) -> None:
    while not done.wait(RENEW_S):
        try:
            held = _read(lease)
            if held is None or held["holder"] != me["holder"]:
                log.warning("the lease on %s was taken over (this run stopped renewing it for "
                            "%s s)", lease.parent, LEASE_S)
                return
            write_json(lease, {**me, "until": time.time() + LEASE_S})
        except OSError as e:  # the store away for a moment: the next renewal may succeed
            log.warning("could not renew the lease on %s: %s", lease.parent, e)


def _read(lease: Place) -> dict | None:
    try:
        return json.loads(lease.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
