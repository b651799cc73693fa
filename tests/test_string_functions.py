"""PRINTF and STR_TO_MAP (operators_lib/sql/functions/printf.py, hashmaps.py): the corpus cases
functions/printf and functions/str_to_map give Flink's results (test_function_cases); here,
what is refused."""

from __future__ import annotations

import pytest

from operators_lib.errors import DataError, SqlError
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query
from tests.caselib import Case


@pytest.mark.parametrize(("query", "said"), [
    ("SELECT PRINTF(s, n) FROM t", "PRINTF needs a string literal as its format"),
    ("SELECT PRINTF('%c', n) FROM t", "PRINTF's %c is not supported"),
    ("SELECT PRINTF('%h', s) FROM t", "PRINTF's %h is not supported"),
    ("SELECT PRINTF('%tY', n) FROM t", "PRINTF's %tY is not supported"),
    ("SELECT PRINTF('%s', DATE '2024-01-01') FROM t", "PRINTF of a DATE is not supported"),
    ("SELECT PRINTF('%s', ARRAY[n]) FROM t", "PRINTF of a ARRAY<INT> is not supported"),
    ("SELECT STR_TO_MAP(s, '(') FROM t", "the delimiter '(', which Java rejects"),
    ("SELECT STR_TO_MAP(s, s) FROM t", "STR_TO_MAP needs a string literal as its delimiter"),
])
def test_forms_not_reproduced_are_refused(spark, tmp_path, query, said):
    (tmp_path / "ddl.sql").write_text("CREATE TABLE t (s STRING, n INT);\n")
    (tmp_path / "q.sql").write_text(query)
    with pytest.raises(SqlError) as e:
        compile_query(load_script([tmp_path / "ddl.sql", tmp_path / "q.sql"]), spark)
    assert e.value.exit_code == 2 and said in str(e.value), str(e.value)


def test_a_map_java_would_grow_fails_the_run(spark, tmp_path):
    # Nine keys in one bucket of a 16-slot table: Java's HashMap grows (another order).
    (tmp_path / "ddl.sql").write_text("CREATE TABLE t (s STRING, n INT);\n")
    (tmp_path / "query.sql").write_text("SELECT STR_TO_MAP(s) AS m FROM t\n")
    (tmp_path / "t.csv").write_text('s,n\n"ab=0,ar=1,bc=2,bs=3,cd=4,ct=5,de=6,du=7,ef=8",1\n')
    with pytest.raises(DataError) as e:  # exit 2
        Case(tmp_path).run(spark, tmp_path / "out", mode="batch")
    assert "STR_TO_MAP of a text whose map Java would grow" in str(e.value), str(e.value)
