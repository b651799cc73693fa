"""Python UDFs (operators_lib/udf/): the corpus cases functions/python_udfs and
group/python_udf_keys give Flink's results (test_function_cases, test_changelog_cases, and on a
standalone cluster test_cluster); here: Structured Streaming runs, the run's error when a
function fails (as Flink's job fails), and what is refused before any run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from operators_lib.errors import DataError, SqlError
from operators_lib.sql import load_script
from operators_lib.sql.planner import compile_query
from tests.caselib import CASES, Case, assert_final, read_csv

UDFS = CASES / "functions" / "python_udfs"
LETTERS = "CREATE FUNCTION letters AS 'udfs.letters' LANGUAGE PYTHON;\n"
DECLARE = "\n".join(line for line in (UDFS / "query.sql").read_text().splitlines()
                    if line.startswith("CREATE"))


@pytest.fixture
def case_dir(tmp_path: Path) -> Path:
    """The functions/python_udfs case's module, table and declarations in a fresh directory,
    with a few functions of its own (the module is found beside the SQL)."""
    d = tmp_path / "q"
    d.mkdir()
    for name in ("ddl.sql", "bid.csv"):
        shutil.copy(UDFS / name, d / name)
    (d / "udfs.py").write_text((UDFS / "udfs.py").read_text() + '''
from pyflink.table.udf import udtf  # noqa: E402


@udf(result_type=DataTypes.BIGINT())
def wrong_type(s):
    return "x"


@udf(result_type=DataTypes.INT(), deterministic=False)
def dice(s):
    return 4


@udf(result_type=DataTypes.INT(), func_type="pandas")
def short(s):
    return s.iloc[:1]


@udf(result_type=DataTypes.INT())
def strict_len(s):
    return len(s)


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def letters(s):
    for i, ch in enumerate(s or ""):
        yield ch, i


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def bad_rows(s):
    yield (s,)
''')
    return d


def _script(d: Path, query: str, extra: str = ""):
    (d / "q.sql").write_text(f"{DECLARE}\n{extra}{query}\n")
    return load_script([d / "ddl.sql", d / "q.sql"])


def _run(spark, d: Path, query: str, extra: str = "", mode: str = "batch"):
    (d / "query.sql").write_text(f"{DECLARE}\n{extra}{query}\n")
    return Case(d).run(spark, d / "out", mode=mode, rows_per_batch=2)


@pytest.mark.parametrize("case_id", ["functions/python_udfs", "group/python_udf_keys",
                                     "group/lateral_over_updates"])
def test_structured_streaming_gives_flinks_result(spark, tmp_path, case_id):
    case = Case(CASES / case_id)
    result = case.run(spark, tmp_path, mode="both", rows_per_batch=2)
    assert result.exit_code == 0, result.message
    assert result.report.parity.verdict == "equal"
    assert result.report.stream.micro_batches_this_run >= 3
    assert_final(case, tmp_path, "stream.csv", "stream_final.csv")


def test_a_function_never_sees_the_streams_marker_rows(spark, case_dir):
    """A stream's end-of-input, late and TTL marker rows carry NULLs through the projections;
    a function that fails on NULL (no input row has one) must not be called with them."""
    result = _run(spark, case_dir, "SELECT strict_len(name) AS n, COUNT(*) AS c FROM bid "
                  "WHERE name IS NOT NULL AND strict_len(name) > 0 GROUP BY strict_len(name)",
                  "CREATE FUNCTION strict_len AS 'udfs.strict_len' LANGUAGE PYTHON;\n",
                  mode="both")
    assert result.report.parity.verdict == "equal"
    assert sorted(read_csv(case_dir / "out" / "stream.csv")[1:]) == [
        ["1", "1"], ["10", "1"], ["12", "2"], ["5", "1"]]


@pytest.mark.parametrize("mode", ["batch", "stream"])
def test_an_exception_in_a_function_fails_the_run_naming_it(spark, case_dir, mode):
    # Flink's job fails on this very call: 0.5 is a DECIMAL, a Python Decimal, and a float
    # times a Decimal raises TypeError (measured with the oracle, PyFlink 2.3).
    with pytest.raises(DataError) as e:  # exit 2
        _run(spark, case_dir, "SELECT auction, discounted(price, 0.5) AS h FROM bid", mode=mode)
    assert "the function discounted raised TypeError" in str(e.value), str(e.value)


@pytest.mark.parametrize(("query", "said"), [
    ("SELECT auction, c FROM bid, LATERAL TABLE(bad_rows(name)) AS T(c, i)",
     "the function bad_rows gave a row of 1 values, not of the 2 it declares"),
    ("SELECT wrong_type(name) AS h FROM bid",
     "the function wrong_type returned 'x' (str) for its BIGINT result"),
    ("SELECT short(bidder) AS h FROM bid", "the function short returned 1 values for"),
])
def test_a_result_not_of_the_declared_type_fails_the_run(spark, case_dir, query, said):
    extra = ("CREATE FUNCTION wrong_type AS 'udfs.wrong_type' LANGUAGE PYTHON;\n"
             "CREATE FUNCTION short AS 'udfs.short' LANGUAGE PYTHON;\n"
             "CREATE FUNCTION bad_rows AS 'udfs.bad_rows' LANGUAGE PYTHON;\n")
    with pytest.raises(DataError) as e:  # exit 2
        _run(spark, case_dir, query, extra)
    assert said in str(e.value), str(e.value)


@pytest.mark.parametrize(("query", "extra", "said"), [
    ("SELECT CASE WHEN auction > 1 THEN 0 ELSE count_char(extra, 'c') END AS h FROM bid", "",
     "count_char inside CASE"),
    ("SELECT auction FROM bid WHERE auction > 1 OR count_char(extra, 'c') > 1", "",
     "count_char inside OR"),
    ("SELECT auction > 2 AND palindrome(extra) AS h FROM bid", "", "palindrome inside AND"),
    ("SELECT COALESCE(initials(name), initials(extra)) AS h FROM bid", "",
     "initials inside COALESCE"),
    ("SELECT add_to(bidder) AS h FROM bid", "", "add_to takes 2 arguments, got 1"),
    ("SELECT count_char(CAST(auction AS TIMESTAMP(3)), 'c') AS h FROM bid", "",
     "COUNT_CHAR needs one of TINYINT"),
    ("SELECT dice(name) AS h FROM bid",
     "CREATE FUNCTION dice AS 'udfs.dice' LANGUAGE PYTHON;\n", "non-deterministic"),
    ("SELECT j(name) AS h FROM bid", "CREATE FUNCTION j AS 'com.example.J';\n",
     "JAVA functions are not supported"),
    ("SELECT m(name) AS h FROM bid", "CREATE FUNCTION m AS 'nowhere.m' LANGUAGE PYTHON;\n",
     "cannot import module nowhere"),
    ("SELECT m(name) AS h FROM bid", "CREATE FUNCTION m AS 'udfs.Decimal' LANGUAGE PYTHON;\n",
     "udfs.Decimal is no PyFlink function"),
    ("SELECT nope(name) AS h FROM bid", "", "unknown or unsupported function NOPE"),
    ("SELECT auction, c FROM bid, LATERAL TABLE(initials(name)) AS T(c)", "",
     "initials is a scalar function"),
    ("SELECT letters(name) AS h FROM bid", LETTERS, "letters is a table function"),
    ("SELECT auction, c FROM bid LEFT JOIN LATERAL TABLE(letters(name)) AS T(c, i) "
     "ON c = 'a'", LETTERS, "takes ON TRUE"),
    ("SELECT auction, c FROM bid, LATERAL TABLE(letters(name)) AS T(c)", LETTERS,
     "letters gives 2 columns"),
    ("SELECT auction, c, SUM(i) OVER (PARTITION BY auction ORDER BY i) AS r "
     "FROM bid, LATERAL TABLE(letters(name)) AS T(c, i)", LETTERS,
     "an OVER window over a table function's rows"),
    ("SELECT auction, LISTAGG(c) AS cs FROM bid, LATERAL TABLE(letters(name)) AS T(c, i) "
     "GROUP BY auction", LETTERS, "FIRST_VALUE, LAST_VALUE, LISTAGG or JSON_ARRAYAGG over a table"),
    ("SELECT upper(name) AS h FROM bid", "CREATE FUNCTION upper AS 'udfs.initials' "
     "LANGUAGE PYTHON;\n", "a built-in function has this name"),
])
def test_what_twinflow_does_not_run_as_flink_is_refused_with_its_line(
        spark, case_dir, query, extra, said):
    with pytest.raises(SqlError) as e:
        compile_query(_script(case_dir, query, extra), spark)
    assert said in str(e.value), str(e.value)
    assert "q.sql, line" in str(e.value), str(e.value)


def test_calls_flink_evaluates_on_every_row_are_planned(spark, case_dir):
    """The first operand of AND, CASE's first condition, COALESCE's first argument and the
    conjuncts of a WHERE are evaluated for every row in Flink too."""
    compile_query(_script(case_dir, "SELECT count_char(extra, 'c') > 1 AND auction > 2 AS a, "
                          "CASE WHEN palindrome(extra) THEN 1 END AS b, "
                          "COALESCE(initials(name), 'x') AS c FROM bid "
                          "WHERE auction > 1 AND (auction < 5 AND count_char(extra, 'c') > 1)"),
                  spark)


REJECTS = CASES / "functions" / "python_udf_rejects"
REJECT = "SET 'twinflow.python-udf.errors' = 'reject';\n"


def _dirty(tmp_path: Path) -> Path:
    """The functions/python_udf_rejects case with rows parse_qty fails on among its input, and
    one the WHERE drops before the function sees it (Flink never calls it there)."""
    d = tmp_path / "rejects"
    shutil.copytree(REJECTS, d)
    lines = (d / "orders.csv").read_text().splitlines()
    lines[3:3] = ["11,north,12a,2.0", "12,south,seven,1.0"]
    lines[7:7] = ["13,east,1.5,4.0", "14,west,x,-2.0"]
    (d / "orders.csv").write_text("\n".join(lines) + "\n")
    (d / "reject.sql").write_text(REJECT)
    return d


@pytest.mark.parametrize("mode", ["both", "batch"])
def test_reject_mode_sets_aside_the_rows_a_function_fails_on(spark, tmp_path, mode):
    """The result is Flink's over the rows the function does not fail on (the case's input),
    in both modes; rejected.csv names each failing row, its file and the function's error."""
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec

    d = _dirty(tmp_path)
    out = tmp_path / "out"
    result = run(RunSpec.bounded_run([d / "ddl.sql", d / "reject.sql", d / "query.sql"],
                           {"orders": d / "orders.csv"}, mode, out, 2), spark)
    assert result.exit_code == 0, result.message
    case = Case(REJECTS)
    assert_final(case, out, "batch.csv", "batch_final.csv")
    if mode == "both":
        assert result.report.parity.verdict == "equal"
        assert_final(case, out, "stream.csv", "stream_final.csv")
    rejected = read_csv(out / "rejected.csv")
    assert rejected[0] == ["table", "file", "line", "reason", "row"]
    assert [(r[0], r[1]) for r in rejected[1:]] == [("orders", "orders.csv")] * 3
    for row, (value, place) in zip(rejected[1:], (("12a", 2), ("seven", 3), ("1.5", 6))):
        assert row[3].startswith(f"input row {place} "), row
        assert f"the function parse_qty raised ValueError: invalid literal for int() with " \
               f"base 10: '{value}'" in row[3], row
        assert f'"qty_text":"{value}"' in row[4], row
    assert result.report.rejected_rows == result.report.udf_rejected_rows == 3


def test_by_default_a_row_a_function_fails_on_fails_the_run(spark, tmp_path):
    from operators_lib.runs.lifecycle import run
    from operators_lib.runs.spec import RunSpec

    d = _dirty(tmp_path)
    with pytest.raises(DataError, match="the function parse_qty raised ValueError"):
        run(RunSpec.bounded_run([d / "ddl.sql", d / "query.sql"], {"orders": d / "orders.csv"},
                      "batch", tmp_path / "out", 2), spark)


@pytest.mark.parametrize(("query", "said"), [
    ("SELECT parse_qty(shop) AS q FROM (SELECT shop, COUNT(*) AS n FROM orders GROUP BY shop)",
     "called after a join, an aggregate"),
    ("SELECT parse_qty(a.qty_text) AS q FROM orders a JOIN orders b ON a.id = b.id",
     "called after a join"),
    ("SELECT parse_qty(qty_text) AS q FROM orders UNION ALL SELECT id AS q FROM orders",
     "reads table orders more than once"),
    ("SELECT parse_qty(CAST(parse_qty(qty_text) AS STRING)) AS q FROM orders",
     "in another's arguments"),
])
def test_reject_mode_is_refused_where_a_failing_row_is_no_input_row(spark, tmp_path, query,
                                                                     said):
    d = _dirty(tmp_path)
    (d / "q.sql").write_text("CREATE TEMPORARY FUNCTION parse_qty AS 'udfs.parse_qty' "
                             f"LANGUAGE PYTHON;\n{REJECT}{query}\n")
    with pytest.raises(SqlError) as e:
        compile_query(load_script([d / "ddl.sql", d / "q.sql"]), spark)
    assert "'twinflow.python-udf.errors' = 'reject'" in str(e.value), str(e.value)
    assert said in str(e.value), str(e.value)


def test_reject_mode_needs_a_row_at_a_time_function(spark, case_dir):
    with pytest.raises(SqlError, match="a vectorized function cannot reject a row"):
        compile_query(_script(case_dir, "SELECT discounted(price, 0.5) AS h FROM bid", REJECT),
                      spark)


def test_reject_mode_is_refused_in_scheduled_runs_for_now(spark, tmp_path):
    from operators_lib.runs.lifecycle import plan_for
    from operators_lib.runs.query_config import QueryConfig

    d = _dirty(tmp_path)
    cfg = QueryConfig(name="rejects", sql=[d / "ddl.sql", d / "reject.sql", d / "query.sql"],
                      inputs={"orders": d}, expectations="none", publish_format="csv")
    with pytest.raises(SqlError, match="not supported in scheduled runs yet"):
        plan_for(cfg, load_script(cfg.sql), spark)


def test_only_the_users_modules_are_pickled_by_value(tmp_path):
    """Modules imported from the SQL files' folder go with the UDF by value; a virtualenv
    inside that folder (a project's .venv beside its queries) holds numpy and pyarrow, whose C
    objects cannot be pickled: those stay by reference. (Found by the real-Airflow test, whose
    virtualenv sits in the folder of its SQL files.)"""
    from types import ModuleType

    from operators_lib.sql.python_udfs import _ours

    def module(name: str, file: Path) -> ModuleType:
        m = ModuleType(name)
        m.__file__ = str(file)
        return m

    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    assert _ours(module("helpers", tmp_path / "helpers.py"), [tmp_path])
    assert _ours(module("mine.sub", tmp_path / "mine" / "sub.py"), [tmp_path])
    assert _ours(module("fast", tmp_path / "fast.cpython-311-x86_64-linux-gnu.so"), [tmp_path])
    assert not _ours(module("numpy", site / "numpy" / "__init__.py"), [tmp_path])
    assert not _ours(module("six", site / "six.py"), [tmp_path])
    assert not _ours(module("helpers", tmp_path / "helpers.py"), [tmp_path / "elsewhere"])
