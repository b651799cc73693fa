"""The Spark driver's class-data archive (operators_lib/engine/jvm_archive.py): used where it
exists, keyed by what makes up the driver's class path, and silent where the JVM cannot use it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyspark

from operators_lib.engine import jvm_archive
from operators_lib.engine.spark import DRIVER_JAVA_OPTIONS, driver_java_options


def test_the_driver_options_name_the_archive_only_where_it_exists(tmp_path, monkeypatch):
    archive = tmp_path / "spark-driver.jsa"
    monkeypatch.setattr(jvm_archive, "path", lambda: archive)
    assert driver_java_options() == DRIVER_JAVA_OPTIONS
    archive.write_bytes(b"x")
    options = driver_java_options()
    assert options.startswith(DRIVER_JAVA_OPTIONS)
    assert f"-XX:SharedArchiveFile={archive}" in options


def test_another_conf_dir_is_another_archive(monkeypatch, tmp_path):
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    default = jvm_archive.path()
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert jvm_archive.path() != default


def _launcher(archive_options: list[str], class_path: str) -> str:
    """Spark's launcher (a small main class of Spark's jars) in a JVM of its own: its output."""
    proc = subprocess.run(["java", *archive_options, "-cp", class_path,
                           "org.apache.spark.launcher.Main", "--version"],
                          capture_output=True, text=True)
    return proc.stdout + proc.stderr


def test_a_jvm_of_another_class_path_starts_silently_without_the_archive(tmp_path):
    """An archive of another class path (say, another SPARK_CONF_DIR in front of Spark's
    jars): the JVM cannot use it, and says nothing about it on the console."""
    [jar] = (Path(pyspark.__file__).parent / "jars").glob("spark-launcher_*.jar")
    archive = tmp_path / "spark-driver.jsa"
    _launcher([f"-XX:ArchiveClassesAtExit={archive}"], str(jar))
    assert archive.is_file()
    other = f"{tmp_path}:{jar}"
    # the JVM's own warning, unless switched off
    assert "Unable to use shared archive" in _launcher([f"-XX:SharedArchiveFile={archive}"],
                                                       other)
    plain = _launcher([], other)
    assert "Spark home not found" in plain  # the launcher ran (without SPARK_HOME it says so)
    assert _launcher(jvm_archive.options_for(archive).split(), other) == plain
    # nor when the archive is missing (a machine where it was never built)
    assert _launcher(jvm_archive.options_for(tmp_path / "none.jsa").split(), other) == plain


def test_the_users_own_class_data_options_leave_the_archive_out(tmp_path, monkeypatch):
    archive = tmp_path / "spark-driver.jsa"
    archive.write_bytes(b"x")
    monkeypatch.setattr(jvm_archive, "path", lambda: archive)
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    assert jvm_archive.java_options("-Xmx2g")
    # HotSpot refuses to start with a dump option beside a dynamic archive
    assert jvm_archive.java_options("-XX:ArchiveClassesAtExit=/tmp/mine.jsa") == ""
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Xshare:off")
    assert jvm_archive.java_options() == ""
    monkeypatch.delenv("SPARK_SUBMIT_OPTS")
    monkeypatch.setenv(jvm_archive.OFF, "off")
    assert jvm_archive.java_options() == ""
