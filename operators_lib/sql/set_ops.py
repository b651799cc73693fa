"""Set operations between two queries: UNION's column alignment, INTERSECT and EXCEPT, planned
as Flink plans them, from twinflow's existing operators (no operator of their own).

- Columns match by position, named as the first input's, of the inputs' common types
  (``aligned``; UNION uses it too).
- ``a INTERSECT b``: a SEMI join of a with b on every column, NULLs equal (IS NOT DISTINCT
  FROM), then a GROUP BY of all columns (DISTINCT); ``a EXCEPT b``: the same with an ANTI
  join. This is Flink's plan (Calcite's ReplaceIntersectWithSemiJoinRule and
  ReplaceMinusWithAntiJoinRule), so the changelog is that of the two operators:
  the join emits a left row (+I) while it has a match (SEMI) / has none (ANTI) and retracts it
  (-D) when that changes; the DISTINCT GROUP BY has no aggregate values, so it emits +I when a
  row's first copy arrives and -D when its last copy leaves, never -U/+U. Measured on Flink
  2.3 (tests/cases/union): NULL equals NULL, duplicates collapse in both inputs, and in stream
  mode an EXCEPT row is inserted and later deleted when the right input catches up.
- The join key of each column is a text that tells NULL apart (``_key``): the join never
  matches a NULL key, IS NOT DISTINCT FROM does.
- Refused: INTERSECT ALL and EXCEPT ALL (Flink counts each row in both inputs and replicates
  it with a table function, emitting a -U/+U per copy; twinflow has no such replication yet),
  and FLOAT / DOUBLE columns (Flink keeps -0.0 and 0.0 apart in the join and the GROUP BY,
  Spark does not).
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.plan import Aggregate, Field, Join, Node, Project, quote
from operators_lib.sql.context import Ctx, is_hidden
from operators_lib.types import FlinkType


def aligned(ctx: Ctx, inputs: list[Node], node: exp.Expression, what: str
            ) -> tuple[tuple[Field, ...], list[Project]]:
    """The visible columns of ``inputs`` by position: the common fields (the first input's
    names, the inputs' common types) and each input projected onto them."""
    shown = [[f for f in i.fields if not is_hidden(f.name)] for i in inputs]
    if len({len(s) for s in shown}) > 1:
        raise ctx.err(f"the inputs of {what} have {' and '.join(str(len(s)) for s in shown)} "
                      "columns", node)
    fields = []
    for column in zip(*shown):
        first, t = column[0], column[0].type
        for other in column[1:]:
            if other.type != t:
                t = ctx.types([], [f"coalesce(CAST(NULL AS {t.spark().simpleString()}), "
                                   f"CAST(NULL AS {other.type.spark().simpleString()}))"],
                              node)[0]
        kinds = {f.time_attr for f in column}
        fields.append(Field(first.name, t, first.time_attr if len(kinds) == 1 else None))
    projected = [Project(i, tuple((f.name, f"CAST({quote(g.name)} AS "
                                            f"{f.type.spark().simpleString()})")
                                  for f, g in zip(fields, s)), tuple(fields))
                 for i, s in zip(inputs, shown)]
    return tuple(fields), projected


def plan_set_operation(ctx: Ctx, node: exp.Intersect | exp.Except, select_fn) -> Node:
    """INTERSECT / EXCEPT (module docstring); ``select_fn`` plans each input query."""
    what = node.key.upper()
    if not node.args.get("distinct"):
        raise ctx.err(f"{what} ALL is not supported yet (Flink replicates each row by its "
                      f"counts with a table function; use {what})", node)
    fields, (left, right) = aligned(ctx, [select_fn(ctx, node.this),
                                          select_fn(ctx, node.expression)], node, what)
    floating = next((f for f in fields if f.type.is_floating), None)
    if floating is not None:
        raise ctx.err(f"{what} over a {floating.type.name} column ({floating.name}) is not "
                      "supported: Flink keeps -0.0 and 0.0 apart there, Spark does not", node)
    lkeys, rkeys = [ctx.hidden("k") for _ in fields], [ctx.hidden("k") for _ in fields]
    left, right = _with_keys(left, lkeys), _with_keys(right, rkeys)
    kind = "SEMI" if isinstance(node, exp.Intersect) else "ANTI"
    ttl = ctx.catalog.state_ttl_ms
    joined = Join(left, right, kind, tuple(lkeys), tuple(rkeys), None, left.fields, ttl)
    # As any GROUP BY's, the result's columns are no time attributes.
    plain = tuple(Field(f.name, f.type) for f in fields)
    shown = Project(joined, tuple((f.name, quote(f.name)) for f in fields), plain)
    return Aggregate(shown, tuple(f.name for f in fields), (), plain, ttl)


def _with_keys(node: Project, keys: list[str]) -> Project:
    """``node`` with one join key per column (``_key``)."""
    exprs = node.exprs + tuple((k, _key(sql)) for k, (_, sql) in zip(keys, node.exprs))
    return Project(node.child, exprs,
                   node.fields + tuple(Field(k, FlinkType("STRING")) for k in keys))


def _key(sql: str) -> str:
    """A non-NULL text equal for two values of one type exactly when they are not distinct
    (both inputs are cast to the common type, whose text form is one-to-one)."""
    return f"CASE WHEN ({sql}) IS NULL THEN 'n' ELSE concat('v', CAST({sql} AS STRING)) END"
