"""Load a ``CREATE FUNCTION f AS 'module.name' LANGUAGE PYTHON`` and register it with Spark.

The module is found as Flink finds it: on the paths of ``SET 'python.files' = 'a.py,dir'``
(twinflow reads a relative path from the directory of the SQL file that sets it; without it,
the SQL files' directories). ``name`` must be a PyFlink ``@udf`` / ``udf(..)`` (a function, a
lambda or a ``ScalarFunction``) with its ``result_type`` (``func_type="pandas"``: vectorized), or a
``@udtf`` (a generator or a ``TableFunction``) with its ``result_types``.

Executors get the code by value: every module loaded from the ``python.files`` paths is
pickled with the UDF (cloudpickle), so neither a local worker nor a cluster's executor needs
the files on its own paths. What twinflow does not run with Flink's semantics is refused by
name (exit 2): ``deterministic=False``, declared argument types, and argument or result types
other than the numbers, STRING and BOOLEAN. A table function (``@udtf``) is called in FROM as
``LATERAL TABLE(f(..)) [AS T(a, ..)]`` (sql/correlate.py).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

from pyspark import cloudpickle
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from operators_lib.catalog import Catalog, FunctionDef
from operators_lib.errors import SqlError
from operators_lib.sql.functions.base import Call, Function, Unsupported
from operators_lib.sql.script import UDF_ERRORS
from operators_lib.types import FlinkType
from operators_lib.udf import pyflink_api
from operators_lib.udf.calls import (
    PREFIX,
    TRY_PREFIX,
    BatchCall,
    RowCall,
    TableCall,
    TryCall,
    vectorized,
)

# Types a UDF's arguments and result may have: Python values of these are the same in Spark
# and in PyFlink (a TIMESTAMP's would follow the Python worker's time zone in Spark).
SCALAR_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "STRING",
                "BOOLEAN")


@dataclass(frozen=True)
class PythonFunction:
    """A loaded UDF: how SQL calls it in Spark and what it returns."""

    name: str  # as declared (CREATE FUNCTION name)
    spark_name: str  # registered in the session under this name
    results: tuple[FlinkType, ...]  # a scalar function's result; a table function's columns
    table: bool  # a table function (LATERAL TABLE): its rows, an ARRAY<STRUCT<f0, ..>>
    min_args: int
    max_args: int | None

    def call(self, args_sql: list[str]) -> str:
        """The call as Spark SQL; its first argument says the row is data (calls.py)."""
        return f"{self.spark_name}({', '.join(('TRUE', *args_sql))})"


def _error(fdef: FunctionDef, message: str) -> SqlError:
    return SqlError(f"function {fdef.name}: {message}", fdef.line, fdef.source)


def _import(fdef: FunctionDef, paths: tuple[Path, ...]) -> pyflink_api.Declared:
    module_name, _, attr = fdef.identifier.rpartition(".")
    if not module_name:
        raise _error(fdef, f"'{fdef.identifier}' is no Python name (expected 'module.function')")
    pyflink_api.install()
    roots = [p.parent if p.suffix == ".py" else p for p in paths]  # a file's: its directory
    for root in reversed(roots):
        if str(root) in sys.path:
            sys.path.remove(str(root))
        sys.path.insert(0, str(root))
    loaded = sys.modules.get(module_name)
    if loaded is not None and not _ours(loaded, roots):  # another query's module of that name
        del sys.modules[module_name]
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - the user's module: any error is theirs to fix
        where = f" (python.files: {', '.join(map(str, paths))})" if paths else (
            " (set 'python.files' to its file or directory)")
        raise _error(fdef, f"cannot import module {module_name}: {type(e).__name__}: {e}{where}"
                     ) from None
    for m in list(sys.modules.values()):
        if _ours(m, roots) and not m.__name__.startswith(("operators_lib", "pyspark")):
            cloudpickle.register_pickle_by_value(m)
    found = getattr(module, attr, None)
    if not isinstance(found, pyflink_api.Declared):
        raise _error(fdef, f"{fdef.identifier} is no PyFlink function (declare it with "
                     "@udf(result_type=...) from pyflink.table.udf)")
    return found


def _ours(module: object, roots: list[Path]) -> bool:
    """Was ``module`` imported from one of the ``python.files`` roots: a module, package or
    compiled module right in it (the first part of its path there is named by its top-level
    name)? One found deeper is not (a virtualenv inside the folder of the SQL files holds numpy
    and pyarrow, which cannot be pickled by value)."""
    f = getattr(module, "__file__", None)
    if not f:
        return False
    top = getattr(module, "__name__", "").partition(".")[0]
    path = Path(f).resolve()
    for root in (r.resolve() for r in roots):
        if path.is_relative_to(root) and path.relative_to(root).parts[0].partition(".")[0] == top:
            return True
    return False


def _type(fdef: FunctionDef, text: str, what: str) -> FlinkType:
    try:
        t = FlinkType.parse(text)
    except ValueError:
        t = None
    if t is None or t.name not in SCALAR_TYPES:
        raise _error(fdef, f"{what} type {text} is not supported (supported: "
                     f"{', '.join(SCALAR_TYPES)})")
    return t


def load(fdef: FunctionDef, paths: tuple[Path, ...], spark: SparkSession, reject: bool = False
         ) -> PythonFunction:
    """``reject``: rows on which the function fails are rejected (udf/rejects.py), which
    needs a scalar function called on one row at a time."""
    declared = _import(fdef, paths)
    if not declared.deterministic:
        raise _error(fdef, "a non-deterministic function (deterministic=False) gives each "
                     "mode other values: not supported")
    if declared.input_types is not None:
        raise _error(fdef, "declared input_types are not supported (Flink casts the arguments "
                     "to them); leave them out")
    table = declared.kind == "table"
    if table and declared.vectorized:
        raise _error(fdef, "a vectorized table function is not Flink's (func_type='pandas' "
                     "is for scalar functions)")
    if not declared.result_types or len(declared.result_types) != 1 and not table:
        raise _error(fdef, f"a {'table' if table else 'scalar'} function needs its "
                     f"result_type{'s' if table else ''}")
    results = tuple(_type(fdef, t, "result") for t in declared.result_types)
    params = list(inspect.signature(declared.func).parameters.values())
    if any(p.kind == p.VAR_KEYWORD or p.kind == p.KEYWORD_ONLY and p.default is p.empty
           for p in params):
        raise _error(fdef, "keyword-only parameters are not supported")
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # Flink matches a call on all the positional parameters (defaults do not make one optional)
    most = None if any(p.kind == p.VAR_POSITIONAL for p in params) else len(positional)
    spark_name = f"{PREFIX}{fdef.name.lower()}"
    if table:
        rows = T.ArrayType(T.StructType([T.StructField(f"f{i}", t.spark())
                                         for i, t in enumerate(results)]))
        call = F.udf(TableCall(fdef.name, declared.func, results), rows)
    elif declared.vectorized:
        call = F.pandas_udf(vectorized(BatchCall(fdef.name, declared.func, results[0])),
                            results[0].spark())
    else:
        row_call = RowCall(fdef.name, declared.func, results[0])
        call = F.udf(row_call, results[0].spark())
        if reject:
            spark.udf.register(f"{TRY_PREFIX}{fdef.name.lower()}",
                               F.udf(TryCall(row_call), T.StringType()).asNondeterministic())
    if reject and (table or declared.vectorized):
        raise _error(fdef, f"with '{UDF_ERRORS}' = 'reject', a "
                     f"{'table' if table else 'vectorized'} function cannot reject a row (a "
                     "scalar function called on one row at a time can)")
    spark.udf.register(spark_name, call)
    return PythonFunction(fdef.name, spark_name, results, table, len(positional), most)


def load_functions(catalog: Catalog, spark: SparkSession) -> dict[str, PythonFunction]:
    """Every CREATE FUNCTION of the script, loaded and registered in ``spark``, by upper-case
    name."""
    reject = catalog.settings.get(UDF_ERRORS) == "reject"
    return {fdef.name.upper(): load(fdef, catalog.python_files, spark, reject)
            for fdef in catalog.functions.values()}


def check_arguments(f: PythonFunction, c: Call) -> None:
    """The call's number and types of arguments, and its place (``_unconditional``)."""
    n = len(c.args)
    if n < f.min_args or (f.max_args is not None and n > f.max_args):
        most = "any number of" if f.max_args is None else str(f.max_args)
        takes = str(f.min_args) if f.max_args == f.min_args else f"{f.min_args} to {most}"
        raise c.reject(f"the Python function {f.name} takes {takes} arguments, got {n}")
    for i in range(n):
        c.require(i, lambda t: t.name in SCALAR_TYPES,
                  f"one of {', '.join(SCALAR_TYPES)} (a Python function's argument)")
    _unconditional(c, f.name)


def as_function(f: PythonFunction) -> Function:
    """A scalar UDF as a row of the function catalog."""
    def render(c: Call) -> str:
        if f.table:
            raise c.reject(f"{f.name} is a table function: call it in FROM, as LATERAL "
                           f"TABLE({f.name}(..))")
        check_arguments(f, c)
        return f.call(list(c.sql))
    return Function(f.name.upper(), f.min_args, f.max_args, render)


# Clauses: a call with none of the conditionals below between it and its clause is evaluated
# for every row in Flink too.
_CLAUSES = (exp.Select, exp.Where, exp.Having, exp.Join, exp.Group, exp.Order, exp.Subquery)
_COALESCING = ("COALESCE", "IFNULL", "NVL")


def _reached_always(node: exp.Expression, parent: exp.Expression, condition: bool) -> bool:
    """Does Flink evaluate ``node`` whenever it evaluates ``parent``? (The first operand of
    AND / OR / COALESCE, CASE's first condition and IF's condition are; the rest only when
    the ones before leave the answer open; a WHERE's conjuncts all are, as Spark filters on
    the others first.)"""
    if isinstance(parent, (exp.And, exp.Or)):
        if node is parent.this:
            return True
        top = parent
        while isinstance(top, exp.And) and isinstance(top.parent, (exp.And, exp.Paren)):
            top = top.parent
        # ``top`` was reached through ANDs only: the call is a conjunct of the condition
        return isinstance(parent, exp.And) and condition and (
            top.parent is None or isinstance(top.parent, (exp.Where, exp.Having)))
    if isinstance(parent, exp.If):  # IF(c, a, b) or a WHEN of a CASE
        case = parent.parent if isinstance(parent.parent, exp.Case) else None
        first = case is None or case.args["ifs"][0] is parent
        return node is parent.this and first
    if isinstance(parent, exp.Case):  # its WHENs are decided above; the ELSE is reached late
        return node is not parent.args.get("default")
    if isinstance(parent, exp.Coalesce) or (
            isinstance(parent, exp.Anonymous) and parent.name.upper() in _COALESCING):
        return node is parent.this or node is (parent.expressions or [None])[0]
    return True


def _unconditional(c: Call, name: str) -> None:
    """Spark evaluates a Python function for every row before any condition around the call
    (its plan pulls Python calls out into their own step), where Flink evaluates it only when
    the CASE branch, IF, COALESCE, AND or OR reaches it: the function would raise, or be
    called, on rows Flink never gives it. Refused."""
    node = c.node
    while node.parent is not None and not isinstance(node.parent, _CLAUSES):
        parent = node.parent
        if not _reached_always(node, parent, c.env.condition):
            what = "CASE" if isinstance(parent, exp.If) and isinstance(
                parent.parent, exp.Case) else parent.name.upper() if isinstance(
                parent, exp.Anonymous) else parent.key.upper()
            raise Unsupported(f"the Python function {name} inside {what}: Spark calls a "
                              "Python function on every row before the condition around it "
                              "(Flink only on the rows it reaches); let the function handle "
                              "the rows the condition excludes", c.node)
        node = parent
