"""Shared fixtures: one local SparkSession for the whole run (JVM start-up once)."""

from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark():
    from operators_lib.spark import get_spark

    session = get_spark("local[2]", app="twinflow-tests")
    yield session
    session.stop()
