"""Where state and outputs are kept (operators_lib/io/storage.py): one path type over a local
disk, a real S3-compatible server and a real HDFS on loopback; what each store can and cannot
do atomically, and a place sent to a task reaching the same store there."""

from __future__ import annotations

import pickle
from contextlib import nullcontext
from pathlib import Path

import pytest

from operators_lib.errors import InputError
from operators_lib.io import storage
from tests.object_store import SECRET_KEY


def _root(kind: str, request, tmp_path: Path) -> storage.Place:
    if kind == "local":
        return tmp_path / "root"
    if kind == "s3":
        s3 = request.getfixturevalue("s3")
        return storage.place(f"s3://data/{tmp_path.name}", "test", s3.store())
    hdfs = request.getfixturevalue("hdfs")
    return storage.place(f"{hdfs.uri}/{tmp_path.name}", "test", hdfs.store())


@pytest.mark.parametrize("kind", ["local", "s3", "hdfs"])
def test_a_place_reads_writes_lists_replaces_and_removes_on_every_store(kind, request,
                                                                        tmp_path):
    root = _root(kind, request, tmp_path)
    assert str(root).startswith({"local": "/", "s3": "s3a://data/", "hdfs": "hdfs://"}[kind])
    (root / "runs").mkdir(parents=True, exist_ok=True)
    (root / "runs" / "a.json").write_text('{"a": 1}')
    (root / "runs" / "b.json").write_bytes(b'{"b": 2}')
    (root / "runs" / "c.txt").write_text("c")
    assert (root / "runs" / "a.json").read_text() == '{"a": 1}'
    assert sorted(p.name for p in (root / "runs").glob("*.json")) == ["a.json", "b.json"]
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["a.json", "b.json", "c.txt"]
    assert (root / "runs").is_dir() and (root / "runs" / "a.json").is_file()
    assert not (root / "absent").exists()
    assert storage.files(root) == ["runs/a.json", "runs/b.json", "runs/c.txt"]
    assert storage.files(root / "runs" / "a.json") == storage.files(root / "absent") == []
    storage.replace(root / "runs" / "b.json", root / "runs" / "a.json")  # replaces it whole
    assert (root / "runs" / "a.json").read_text() == '{"b": 2}'
    assert not (root / "runs" / "b.json").exists()
    with pytest.raises(ValueError, match="S3 cannot replace a directory") if kind == "s3" \
            else nullcontext():
        storage.replace(root / "runs", root / "moved")
    storage.rmtree(root)
    storage.rmtree(root)  # an absent place: nothing to do
    assert not (root / "runs" / "a.json").exists()


@pytest.mark.parametrize("kind", ["s3", "hdfs"])
def test_a_place_sent_to_a_task_reaches_its_store_and_never_shows_a_key(kind, request,
                                                                        tmp_path):
    root = _root(kind, request, tmp_path)
    (root / "x").write_text("from the driver")
    copy = pickle.loads(pickle.dumps(root / "x"))  # as Spark ships it to a task
    assert copy.read_text() == "from the driver" and str(copy) == str(root / "x")
    assert SECRET_KEY not in repr(root) + str(root) + repr(root.storage_options)


def test_a_uri_of_another_scheme_is_refused_naming_what_it_is_for():
    with pytest.raises(InputError, match=r"--out 'gs://b/x' is a URI twinflow does not"):
        storage.place("gs://b/x", "--out")
    assert storage.place(Path("s3a:/b/x"), "--out").protocol == "s3a"  # a Path folded //



def test_hadoop_settings_outside_spark_follow_sparks_order(tmp_path):
    """An Airflow task's Store (io/hadoop_conf.py): $HADOOP_CONF_DIR's site files, then the
    AWS environment variables, then the config's spark.hadoop.* win, as in Spark."""
    from operators_lib.io.hadoop_conf import settings, store_from

    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>fs.s3a.endpoint</name><value>http://site:1</value>"
        "</property><property><name>fs.s3a.path.style.access</name><value>true</value>"
        "</property><property><name>fs.defaultFS</name><value>hdfs://nn:8020</value>"
        "</property></configuration>")
    (tmp_path / "hdfs-site.xml").write_text(
        "<configuration><property><name>dfs.namenode.http-address</name>"
        "<value>0.0.0.0:9870</value></property></configuration>")
    env = {"HADOOP_CONF_DIR": str(tmp_path), "AWS_ACCESS_KEY_ID": "AK",
           "AWS_SECRET_ACCESS_KEY": "SK", "AWS_ENDPOINT_URL": "http://env:2"}
    store = store_from(settings({}, env).get)
    assert (store.endpoint, store.path_style, store.access_key, store.secret_key) == (
        "http://env:2", True, "AK", "SK")
    assert dict(store.namenodes)["nn:8020"] == "nn:9870"
    conf = {"spark.hadoop.fs.s3a.endpoint": "http://conf:3", "spark.sql.x": "y"}
    assert store_from(settings(conf, env).get).endpoint == "http://conf:3"
    assert store_from(settings({}, {}).get) == storage.Store()
    assert "SK" not in repr(store)
