"""CONVERT_TZ (operators_lib/sql/functions/timezones.py): the corpus case functions/time_convert_tz
gives Flink's results (test_function_cases); here, the texts twinflow does not read as Flink
does fail the run naming them, and non-literal zones are refused."""

from __future__ import annotations

import pytest

from operators_lib.errors import DataError, SqlError
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query
from tests.caselib import Case

DDL = "CREATE TABLE t (s STRING, z STRING);\n"


@pytest.mark.parametrize("text", [
    "2024-11-03 01:30:00",  # New York's clock repeats it: Flink reads EST, Spark EDT
    "1500-06-01 12:00:00",  # before 1900: java.util.TimeZone is not java.time's zone rules
    "abc", "2024-01-01 10:00",  # Flink gives NULL for these, reads others leniently
])
def test_a_text_not_read_as_flink_reads_it_fails_the_run(spark, tmp_path, text):
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "query.sql").write_text(
        "SELECT CONVERT_TZ(s, 'America/New_York', 'UTC') AS x FROM t\n")
    (tmp_path / "t.csv").write_text(f"s,z\n{text},UTC\n")
    with pytest.raises(DataError) as e:  # exit 2
        Case(tmp_path).run(spark, tmp_path / "out", mode="batch")
    assert "CONVERT_TZ of a text twinflow does not read as Flink does" in str(e.value)


def test_a_zone_must_be_a_literal(spark, tmp_path):
    (tmp_path / "ddl.sql").write_text(DDL)
    (tmp_path / "q.sql").write_text("SELECT CONVERT_TZ(s, z, 'UTC') FROM t")
    with pytest.raises(SqlError) as e:
        compile_query(load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"]), spark)
    assert "CONVERT_TZ needs a string literal as its time zone" in str(e.value), str(e.value)
