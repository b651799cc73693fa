"""``INSERT INTO t [(c1, c2, ..)] SELECT ..``: the query's result takes the target's columns.

Flink writes the query's columns by position into the declared table (or into the listed
columns, in the list's order). twinflow's output is its own files in ``--out`` whatever the
target's connector (``blackhole``, ``filesystem``, ``print`` ...): the result's columns are named
and typed as the target's. A column whose type is not the target's is cast where Flink casts it
implicitly without loss (a wider integer, FLOAT to DOUBLE, more fraction digits, a DECIMAL of
the same scale: twinflow derives DECIMAL precisions by Spark's rules, one digit more than
Flink's for a product, and a value that does not fit fails the run under Spark's ANSI mode; a
TIMESTAMP into a TIMESTAMP_LTZ and back, which Flink converts in the session time zone, UTC
in twinflow: the same digits, so a computed TIMESTAMP_LTZ that twinflow types TIMESTAMP is
written as the target's type says);
any other difference is refused, as is a column of the target left out of the list.
"""

from __future__ import annotations

from operators_lib.catalog import TableDef
from operators_lib.plan import Field, Node, Project, quote
from operators_lib.sql.context import Ctx
from operators_lib.types import FlinkType

_INTEGRAL = ["TINYINT", "SMALLINT", "INT", "BIGINT"]


def into_sink(ctx: Ctx, plan: Node, sink: TableDef, listed: tuple[str, ...] | None) -> Node:
    targets = sink.physical
    by_name = {c.name.lower(): c for c in targets}
    if listed is not None:
        twice = sorted({c for c in listed if [x.lower() for x in listed].count(c.lower()) > 1})
        if twice:
            raise ctx.err(f"INSERT INTO {sink.name}: column {twice[0]} is listed twice", None)
        unknown = [c for c in listed if c.lower() not in by_name]
        if unknown:
            raise ctx.err(f"INSERT INTO {sink.name}: no column {unknown[0]} in {sink.name}", None)
        missing = [c.name for c in targets if c.name.lower() not in {n.lower() for n in listed}]
        if missing:
            raise ctx.err(f"INSERT INTO {sink.name} ({', '.join(listed)}): column(s) "
                          f"{', '.join(missing)} left out (Flink writes NULL there); twinflow "
                          "needs every column listed", None)
        targets = tuple(by_name[c.lower()] for c in listed)
    if len(targets) != len(plan.fields):
        raise ctx.err(f"INSERT INTO {sink.name}: the query gives {len(plan.fields)} columns, "
                      f"{sink.name} takes {len(targets)}", None)
    chosen: dict[str, tuple[tuple[str, str], Field]] = {}
    for field, target in zip(plan.fields, targets):
        if field.type == target.type:
            chosen[target.name] = ((target.name, quote(field.name)),
                                   Field(target.name, field.type, field.time_attr))
            continue
        if not _widens(field.type, target.type):
            raise ctx.err(f"INSERT INTO {sink.name}: column {target.name} is "
                          f"{target.type.sql()}, the query gives {field.type.sql()} "
                          "(cast it in the SELECT)", None)
        cast = f"CAST({quote(field.name)} AS {target.type.spark().simpleString()})"
        chosen[target.name] = ((target.name, cast), Field(target.name, target.type))
    ordered = [chosen[c.name] for c in sink.physical]
    return Project(plan, tuple(e for e, _ in ordered), tuple(f for _, f in ordered))


def _widens(a: FlinkType, b: FlinkType) -> bool:
    if a.name in _INTEGRAL and b.name in _INTEGRAL:
        return _INTEGRAL.index(a.name) <= _INTEGRAL.index(b.name)
    if (a.name, b.name) == ("FLOAT", "DOUBLE"):
        return True
    if a.name == b.name == "DECIMAL":
        return a.scale == b.scale
    if a.is_timestamp and b.is_timestamp:  # TIMESTAMP <-> TIMESTAMP_LTZ: UTC, same digits
        return (a.precision or 0) <= (b.precision or 0)
    return False
