"""Plan -> DataFrame for the operators that are the same in both modes (Filter, Project, and
Spark's own join where its semantics are Flink's in both).

The batch and stream planners pass in how to build a Scan and each stateful operator (Over,
Join, Aggregate); everything between them is translated here once, so the two modes evaluate
every scalar expression identically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from operators_lib.plan import (
    BATCH,
    EMIT_TS,
    HIDDEN,
    MARKERS,
    OP,
    ROWNUM,
    SWEEP_FIRST,
    TTL_KEY,
    Aggregate,
    Calc,
    Cond,
    Correlate,
    Filter,
    Join,
    Node,
    Project,
    Scan,
    TimeWindow,
    Union,
    WindowRows,
    children,
    quote,
)
from operators_lib.types import FlinkType
from operators_lib.udf.calls import data_rows_only

Operators = dict[type, Callable[..., DataFrame]]  # node type -> f(node, *child DataFrames)


def build(node: Node, scan: Callable[[Scan], DataFrame], operators: Operators) -> DataFrame:
    if isinstance(node, Scan):
        return scan(node)
    inputs = [build(c, scan, operators) for c in children(node)]
    if isinstance(node, Filter):
        node = replace(node, condition=data_rows_only(node.condition, inputs[0].columns))
        return operators.get(Filter, filter_rows)(node, inputs[0])
    if isinstance(node, Project):
        child = inputs[0]
        cols = [F.expr(data_rows_only(sql, child.columns)).alias(name) for name, sql in node.exprs]
        return child.select(*cols, *[F.col(h) for h in HIDDEN if h in child.columns])
    if isinstance(node, Correlate):
        return correlate(node, inputs[0])
    if isinstance(node, WindowRows):
        return window_rows(node, inputs[0])
    if isinstance(node, Union):
        return union_all(node, inputs)
    op = operators.get(type(node))
    if op is None:
        raise TypeError(f"unknown plan node {type(node).__name__}")
    return op(node, *inputs)


def correlate(node: Correlate, child: DataFrame) -> DataFrame:
    """Each row with each of the table function's rows (plan.Correlate); its hidden columns
    (changelog kind, arrival) carried to each. A marker row gets one row of NULLs from the
    function (udf/calls.py): it passes once."""
    rows = F.expr(data_rows_only(node.call, child.columns))
    out = child.select("*", (F.explode_outer if node.outer else F.explode)(rows).alias(_ROW))
    made = node.fields[len(node.child.fields):]
    return out.select(*[F.col(quote(f.name)) for f in node.child.fields],
                      *[F.col(f"{_ROW}.f{i}").alias(f.name) for i, f in enumerate(made)],
                      *[F.col(h) for h in HIDDEN if h in child.columns])


_ROW = "tw__row"


def filter_rows(node: Filter, child: DataFrame, sweeps: bool = False) -> DataFrame:
    """WHERE / HAVING. Late rows and TTL reports travel with the changelog to the sink: kept;
    ``sweeps`` (stream mode): state sweep rows (plan.SWEEP_FIRST) too."""
    cond: Column = F.expr(node.condition)
    kept = ([F.col(OP).isin(*MARKERS)] if OP in child.columns else []) + (
        [F.col(ROWNUM) <= SWEEP_FIRST] if sweeps else [])
    for keep in kept:
        cond = keep | F.coalesce(cond, F.lit(False))
    return child.where(cond)


_DEFAULTS = {OP: ("+I", "string"), EMIT_TS: (0, "long"), TTL_KEY: (None, "long")}


def union_all(node: Union, inputs: list[DataFrame]) -> DataFrame:
    """UNION ALL in both modes: the inputs' rows, arrival numbers kept apart (plan.Union); a
    changelog column one input lacks is its default (an append-only input inserts)."""
    hidden = [h for h in HIDDEN if h != ROWNUM and any(h in df.columns for df in inputs)]
    n, parts = len(inputs), []
    for i, df in enumerate(inputs):
        rownum = F.when(F.col(ROWNUM) < 0, F.col(ROWNUM)).otherwise(F.col(ROWNUM) * n + i)
        if OP in df.columns:  # markers keep their table's row numbers (late.csv)
            rownum = F.when(F.col(OP).isin(*MARKERS), F.col(ROWNUM)).otherwise(rownum)
        parts.append(df.select(*[F.col(quote(f.name)) for f in node.fields],
                               rownum.alias(ROWNUM),
                               *[F.col(h) if h in df.columns else
                                 F.lit(_DEFAULTS[h][0]).cast(_DEFAULTS[h][1]).alias(h)
                                 for h in hidden]))
    out = parts[0]
    for part in parts[1:]:
        out = out.unionByName(part)
    return out


def carried(df: DataFrame) -> list[Column]:
    """Columns every operator passes on: the harness's micro-batch id (absent in Spark runs)."""
    return [F.col(BATCH)] if BATCH in df.columns else []


_JOIN_TYPES = {"INNER": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full",
               "SEMI": "left_semi", "ANTI": "left_anti"}


def spark_join(node: Join, left: DataFrame, right: DataFrame,
               null_keys_match: bool = False) -> DataFrame:
    """The join as Spark's own join operator (batch mode; stream mode for inner window joins
    of append-only inputs), with the residual condition built from the same ``Cond``.
    ``null_keys_match``: NULL key parts equal NULL (a temporal join's keyed operator)."""
    lnames = [f.name for f in node.left.fields]
    rnames = [f.name for f in node.right.fields]
    left, right = left.select(*lnames, *carried(left)), right.select(*rnames, *carried(right))
    cond = [left[lk].eqNullSafe(right[rk]) if null_keys_match else left[lk] == right[rk]
            for lk, rk in zip(node.left_keys, node.right_keys)]
    if node.residual is not None:
        cond.append(cond_column(node.residual, left, right))
    if node.interval is not None:  # batch mode's interval join: its bounds are a condition
        iv = node.interval
        lt, rt = F.unix_millis(left[iv.left_time]), F.unix_millis(right[iv.right_time])
        cond += [lt >= rt + F.lit(iv.lower_ms), lt <= rt + F.lit(iv.upper_ms)]
    on = cond[0] if cond else F.lit(True)
    for c in cond[1:]:
        on = on & c
    joined = left.join(right, on, _JOIN_TYPES[node.kind])
    if node.kind in ("SEMI", "ANTI"):
        rnames = []
    # Under the harness a match belongs to the later micro-batch of its two rows, as in
    # Spark's stream-stream join.
    batch = [F.greatest(left[BATCH], right[BATCH]).alias(BATCH)] if carried(left) else []
    out = joined.select(*[left[n] for n in lnames], *[right[n] for n in rnames],
                        F.lit(0).cast("long").alias(ROWNUM), F.lit(0).cast("long").alias(EMIT_TS),
                        *batch)
    return with_ttl_key(node, out)


def cond_column(cond: Cond, left: DataFrame, right: DataFrame) -> Column:
    """A join's residual condition as a Spark column (SQL's three-valued logic)."""
    if cond.op == "COL":
        name = cond.args[0]
        return left[name] if name in left.columns else right[name]
    if cond.op in ("AND", "OR"):
        a, b = (cond_column(c, left, right) for c in cond.args)
        return (a & b) if cond.op == "AND" else (a | b)
    if cond.op == "NOT":
        return ~cond_column(cond.args[0], left, right)
    a, b = (_operand(x, left, right) for x in cond.args)
    return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b,
            "<=>": a.eqNullSafe(b)}[cond.op]


def _operand(arg: str | Calc, left: DataFrame, right: DataFrame) -> Column:
    """A comparison operand: a column of either side, or a value computed from both (Spark's
    arithmetic, ANSI: an integer overflow fails the run, as stream/calc.py does)."""
    if isinstance(arg, str):
        return left[arg] if arg in left.columns else right[arg]
    args = [_operand(a, left, right) for a in arg.args]
    if arg.op == "NEG":
        return -args[0]
    if arg.op == "||":
        return F.concat(*[a.cast("string") for a in args])
    value = {"+": args[0] + args[1], "-": args[0] - args[1], "*": args[0] * args[1]}[arg.op]
    return value.cast(FlinkType(arg.type).spark())


def with_ttl_key(node: Join | Aggregate, df: DataFrame) -> DataFrame:
    """With state TTL, every output row carries a hash of its operator key (the join key, or
    the group key), computed the same way in both modes: parity can then set aside exactly the
    rows of keys whose state expired."""
    if not node.ttl_ms:
        return df
    if isinstance(node, Aggregate):
        keys = [F.col(quote(g)) for g in node.group_by]
    elif node.kind in ("SEMI", "ANTI"):
        keys = [F.col(quote(k)) for k in node.left_keys]
    else:
        keys = [F.coalesce(F.col(quote(lk)), F.col(quote(rk)))
                for lk, rk in zip(node.left_keys, node.right_keys)]
    return df.withColumn(TTL_KEY, F.xxhash64(*keys) if keys else F.lit(0).cast("long"))


WSTART, WEND, _BASE, _K = "tw__wsms", "tw__wems", "tw__wbase", "tw__wk"


def with_windows(w: TimeWindow, df: DataFrame, t: Column) -> DataFrame:
    """``df`` with one row per window of time ``t`` and its (start, end) in epoch
    milliseconds."""
    size, step, offset = F.lit(w.size_ms), F.lit(w.step_ms), F.lit(w.offset_ms)
    if w.kind == "TUMBLE":
        start = t - F.pmod(t - offset, size)
        return df.select("*", start.alias(WSTART), (start + size).alias(WEND))
    n = w.size_ms // w.step_ms
    if w.kind == "HOP":  # the windows starting at the last slide boundary and n - 1 before it
        base, k = t - F.pmod(t - offset, step), F.sequence(F.lit(0), F.lit(n - 1))
    else:  # CUMULATE: the windows of the period that end after t
        base = t - F.pmod(t - offset, size)
        k = F.sequence(F.floor((t - base) / step).cast("int") + 1, F.lit(n))
    df = df.select("*", base.alias(_BASE), F.explode(k).alias(_K))
    if w.kind == "HOP":
        start = F.col(_BASE) - F.col(_K) * step
        return df.select("*", start.alias(WSTART), (start + size).alias(WEND)).drop(_BASE, _K)
    return df.select("*", F.col(_BASE).alias(WSTART),
                     (F.col(_BASE) + F.col(_K) * step).alias(WEND)).drop(_BASE, _K)


def window_rows(node: WindowRows, df: DataFrame) -> DataFrame:
    """A window TVF's rows, the same stateless projection in both modes."""
    t = F.unix_millis(F.col(quote(node.time_col)))
    start, end, wtime = (f.name for f in node.fields[-3:])
    out = with_windows(node.window, df, t)
    return out.select(*[F.col(quote(f.name)) for f in node.fields[:-3]],
                      F.timestamp_millis(F.col(WSTART)).alias(start),
                      F.timestamp_millis(F.col(WEND)).alias(end),
                      F.timestamp_millis(F.col(WEND) - 1).alias(wtime),
                      *[F.col(h) for h in HIDDEN if h in out.columns])
