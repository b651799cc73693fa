"""PRINTF (operators_lib/sql/functions/printf.py): the corpus case functions/printf gives Flink's
results (test_function_cases); here, what is refused before any run."""

from __future__ import annotations

import pytest

from operators_lib.errors import SqlError
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query


@pytest.mark.parametrize(("query", "said"), [
    ("SELECT PRINTF(s, n) FROM t", "PRINTF needs a string literal as its format"),
    ("SELECT PRINTF('%c', n) FROM t", "PRINTF's %c is not supported"),
    ("SELECT PRINTF('%h', s) FROM t", "PRINTF's %h is not supported"),
    ("SELECT PRINTF('%tY', n) FROM t", "PRINTF's %tY is not supported"),
    ("SELECT PRINTF('%s', DATE '2024-01-01') FROM t", "PRINTF of a DATE is not supported"),
    ("SELECT PRINTF('%s', ARRAY[n]) FROM t", "PRINTF of a ARRAY<INT> is not supported"),
])
def test_forms_not_reproduced_are_refused(spark, tmp_path, query, said):
    (tmp_path / "ddl.sql").write_text("CREATE TABLE t (s STRING, n INT);\n")
    (tmp_path / "q.sql").write_text(query)
    with pytest.raises(SqlError) as e:
        compile_query(load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"]), spark)
    assert e.value.exit_code == 2 and said in str(e.value), str(e.value)
