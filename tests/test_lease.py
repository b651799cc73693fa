"""The lease on a query's state on a store (state/lease.py), on the loopback S3 server: one
holder at a time; a live holder keeps it (another run waits, then fails naming it); a killed
holder's lease lapses and the next run takes it over."""

from __future__ import annotations

import json
import threading
import time

import pytest

from operators_lib.errors import InputError
from operators_lib.io import storage
from operators_lib.io.output import write_json
from operators_lib.state import lease


@pytest.fixture
def quick(monkeypatch):
    """A lease of 2 s, renewed every 0.5 s."""
    monkeypatch.setattr(lease, "LEASE_S", 2.0)
    monkeypatch.setattr(lease, "RENEW_S", 0.5)
    monkeypatch.setattr(lease, "SETTLE_S", 0.2)


def test_a_live_holder_keeps_the_lease_and_the_next_run_fails_naming_it(s3, quick):
    state = storage.place("s3a://data/lease/live", "state", s3.store())
    inside, release = threading.Event(), threading.Event()

    def holder() -> None:
        with lease.leased(state):
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    assert inside.wait(30)
    started = time.monotonic()
    with pytest.raises(InputError, match=r"in use by another run .*process \d+"):
        with lease.leased(state):
            pass
    waited = time.monotonic() - started
    assert 2.0 <= waited < 6, waited  # it waited for a lapse that the renewals prevented
    release.set()
    thread.join()
    assert not (state / lease.LEASE).exists()  # given back
    with lease.leased(state):  # and taken at once
        assert json.loads((state / lease.LEASE).read_text())["until"] > time.time()


def test_a_killed_holders_lease_lapses_and_the_next_run_takes_it_over(s3, quick):
    state = storage.place("s3a://data/lease/killed", "state", s3.store())
    write_json(state / lease.LEASE, {"holder": "gone", "host": "h", "pid": 1,
                                     "until": time.time() + 1.5})  # renewed no more
    started = time.monotonic()
    with lease.leased(state):
        assert json.loads((state / lease.LEASE).read_text())["holder"] != "gone"
    assert 1.5 <= time.monotonic() - started < 5
    assert not (state / lease.LEASE).exists()
