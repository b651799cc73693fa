"""Where twinflow reads and writes (operators_lib/engine/locations.py): local paths only, and on a
cluster only where every executor sees what the driver sees; anything else is exit 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from operators_lib.engine.locations import blind_hosts, check_shared, local_path
from operators_lib.errors import InputError
from operators_lib.runs.query_config import QueryConfig

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "examples" / "seed"


@pytest.mark.parametrize("uri", ["s3a://bucket/out", "hdfs://namenode:8020/twinflow",
                                 "file:///tmp/out", Path("gs://bucket/x")])
def test_a_uri_is_refused_as_given(uri):
    with pytest.raises(InputError, match="is a URI") as err:
        local_path(uri, "--out")
    assert str(uri if not isinstance(uri, Path) else "gs://bucket/x") in str(err.value)


@pytest.mark.parametrize("path", ["/tmp/out", "runs/demo", "a:b", "./x:/y"])
def test_local_paths_pass(path):
    assert local_path(path, "--out") == Path(path)


@pytest.mark.parametrize(("command", "uri"), [
    (["run", "--sql", str(SEED / "tmall_item.sql"), "--sql", str(SEED / "rows_max_price.sql"),
      "--data", f"tmall_item={SEED / 'incoming' / 'tmall_item'}"], "gs://bucket/out"),
    (["demo"], "s3a://bucket/out")])
def test_the_cli_refuses_a_uri_it_cannot_write_and_writes_nothing(tmp_path, command, uri):
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", *command, "--out", uri],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2, proc.stderr
    assert f"--out {uri!r}" in proc.stderr
    assert not list(tmp_path.iterdir())  # no local 'gs:' or 's3a:' directory


def test_a_query_configs_input_uri_is_kept_and_one_twinflow_cannot_read_is_refused(tmp_path):
    config = tmp_path / "q.json"
    inputs = {"t": "s3://bucket/landing", "u": "hdfs://nn:8020/in", "v": "in/v"}
    config.write_text(json.dumps({"name": "q", "sql": ["q.sql"], "expectations": "s",
                                  "inputs": inputs}))
    assert QueryConfig.load(config).inputs == {
        "t": "s3a://bucket/landing", "u": "hdfs://nn:8020/in", "v": tmp_path / "in" / "v"}
    config.write_text(json.dumps({"name": "q", "sql": ["q.sql"], "expectations": "s",
                                  "inputs": {"t": "gs://bucket/landing"}}))
    with pytest.raises(InputError, match=r"input of t 'gs://bucket/landing' is a URI twinflow "
                                         "does not read yet"):
        QueryConfig.load(config)


def test_tasks_that_do_not_see_the_drivers_token_are_named(spark, tmp_path):
    assert blind_hosts(spark, tmp_path / "absent", "x") == [socket.gethostname()]
    (tmp_path / "token").write_text("other")
    assert blind_hosts(spark, tmp_path / "token", "x") == [socket.gethostname()]
    check_shared(spark, tmp_path / "shared", force=True)  # here every task sees it
    assert not list((tmp_path / "shared").iterdir())  # the token is gone


def test_a_directory_some_executors_do_not_see_is_an_error(spark, tmp_path, monkeypatch):
    from operators_lib.engine import locations

    monkeypatch.setattr(locations, "blind_hosts", lambda *_: ["worker-7"])
    with pytest.raises(InputError, match=r"executors on worker-7 do not see .*shared"):
        check_shared(spark, tmp_path / "shared", force=True)
    assert not list((tmp_path / "shared").iterdir())  # no token left behind
