"""Render a checked, resolved Flink expression as Spark SQL with Flink's semantics.

Function calls render through the catalog (``sql/functions/``); operators whose Flink rules
differ from Spark's render here: ``/`` between integers is integer division (truncating, in the
wider type; Flink fails on a zero divisor and so does Spark's DIV), ``+ - * /`` with a FLOAT and
no DOUBLE or DECIMAL operand stays FLOAT (Spark widens it to DOUBLE),
``%`` takes exact numerics only, ``||`` strings only, LIKE has no escape character unless
ESCAPE names one (Spark's default escape is the backslash), and a TIME plus or minus an interval
wraps around midnight (Spark fails). Every other operator renders as
itself; a node of any class not handled here is refused (``Unsupported``), never passed through.
"""

from __future__ import annotations

from sqlglot import exp

from operators_lib.sql.functions import (
    FUNCTIONS,
    Call,
    Env,
    Unsupported,
    function_call,
    when_of_case,
)
from operators_lib.sql.functions.base import ieee_divide

# Render as themselves once their operands are rendered (same meaning in Flink and Spark).
_AS_IS = (exp.Paren, exp.Neg, exp.Add, exp.Sub, exp.Mul, exp.EQ, exp.NEQ, exp.LT, exp.LTE,
          exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ, exp.And, exp.Or, exp.Not, exp.Is,
          exp.In, exp.Between, exp.Case)
# Leaves (a resolved column is quoted, literals re-quoted for Spark, a Var is a unit keyword).
_LEAVES = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.Interval, exp.Var)


def to_spark(node: exp.Expression, env: Env) -> str:
    return _spark(node, env).sql(dialect="spark")


def _raw(text: str) -> exp.Expression:
    """Spark SQL text as a node of the tree the Spark generator prints."""
    return exp.Var(this=f"({text})")


def _spark(node: exp.Expression, env: Env) -> exp.Expression:
    call = function_call(node)
    if call is not None:
        name, args = call
        function = FUNCTIONS.get(name) or env.functions.get(name)
        if name in ("GROUPING", "GROUPING_ID", "GROUP_ID"):  # sql/grouping_sets.py's constants
            raise Unsupported(f"{name} is only allowed in an aggregation (GROUP BY)", node)
        if function is None:  # check() refuses these first; the renderer never guesses
            raise Unsupported(f"unknown or unsupported function {name}", node)
        sql = tuple(to_spark(a, env) for a in args)
        return _raw(function.render(Call(name, node, tuple(args), sql, env)))
    if isinstance(node, _LEAVES):
        if isinstance(node, exp.Column) and node.args.get("table"):
            raise Unsupported(f"unresolved column {node.sql()}", node)
        return node.copy()
    if isinstance(node, exp.Div):
        return _raw(_divide(node, env))
    if isinstance(node, exp.Mod):
        return _raw(_call(node, "MOD", [node.this, node.expression], env))
    if isinstance(node, exp.DPipe):
        return _raw(_call(node, "CONCAT", [node.this, node.expression], env))
    if isinstance(node, (exp.Like, exp.Escape)):
        return _raw(_like(node, env))
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval) and (
            env.type_of(node.this).name == "TIME"):
        return _raw(_time_shift(node, env))
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)) and _integral(env, node.this,
                                                                 node.expression):
        return _raw(_wrapping(node, env))
    if isinstance(node, exp.Neg) and not isinstance(node.this, exp.Literal) and _integral(
            env, node.this):
        return _raw(_wrapping(exp.Sub(this=exp.Literal.number(0), expression=node.this), env))
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)) and _stays_float(
            node.this, node.expression, env):
        return _raw(f"CAST({_as_is(node, env).sql(dialect='spark')} AS FLOAT)")
    if isinstance(node, _AS_IS):
        if isinstance(node, exp.In) and node.args.get("query") is not None:
            raise Unsupported("IN (SELECT ..) is only supported as a condition ANDed to WHERE",
                              node)
        return _as_is(node, env)
    raise Unsupported(f"{type(node).__name__.upper()} ({node.sql(dialect='spark')[:60]}) is not "
                      "supported", node)


def _as_is(node: exp.Expression, env: Env) -> exp.Expression:
    """``node`` with its operands rendered."""
    out = node.copy()
    for key, value in node.args.items():
        if isinstance(value, exp.Expression):
            out.set(key, _operand(value, env))
        elif isinstance(value, list):
            out.set(key, [_operand(v, env) for v in value])
    return out


def _operand(node: exp.Expression, env: Env) -> exp.Expression:
    if when_of_case(node):
        return exp.If(this=_spark(node.this, env), true=_spark(node.args["true"], env))
    return _spark(node, env)


def _call(node: exp.Expression, name: str, args: list[exp.Expression], env: Env) -> str:
    sql = tuple(to_spark(a, env) for a in args)
    return FUNCTIONS[name].render(Call(name, node, tuple(args), sql, env))


def _divide(node: exp.Div, env: Env) -> str:
    a, b = node.this, node.expression
    ta, tb = env.type_of(a), env.type_of(b)
    sa, sb = to_spark(a, env), to_spark(b, env)
    if ta.is_integral and tb.is_integral:
        wider = max(ta, tb, key=lambda t: t.integral_bits())
        return f"CAST(({sa}) DIV ({sb}) AS {wider.spark().simpleString()})"
    if ta.is_floating or tb.is_floating:
        quotient = ieee_divide(sa, sb)
        return f"CAST({quotient} AS FLOAT)" if _stays_float(a, b, env) else quotient
    return f"({sa}) / ({sb})"


def _integral(env: Env, *nodes: exp.Expression) -> bool:
    return all(not n.find(exp.Interval) and env.type_of(n).is_integral for n in nodes)


_TRY = {exp.Add: ("try_add", "+"), exp.Sub: ("try_subtract", "-"),
        exp.Mul: ("try_multiply", "*")}


def _wrapping(node: exp.Add | exp.Sub | exp.Mul, env: Env) -> str:
    """Integer +, -, * of Flink's type (the wider operand's) that wrap around on overflow as
    Java's do (Flink); Spark's ANSI mode fails instead. Spark's try_* answers where nothing
    overflows; otherwise the exact result (BIGINT, or DECIMAL(38, 0) for 64 bits) keeps its
    low bits."""
    a, b = node.this, node.expression
    to = max(env.type_of(a), env.type_of(b), key=lambda t: t.integral_bits())
    spark_to, bits = to.spark().simpleString(), to.integral_bits()
    sa, sb = f"CAST({to_spark(a, env)} AS {spark_to})", f"CAST({to_spark(b, env)} AS {spark_to})"
    fast, op = _TRY[type(node)]
    wide = "DECIMAL(20, 0)" if bits == 64 else "BIGINT"
    exact = f"(CAST({sa} AS {wide}) {op} CAST({sb} AS {wide}))"
    half, full = 2 ** (bits - 1), 2 ** bits
    wrapped = f"CAST(pmod(pmod({exact}, {full}) + {half}, {full}) - {half} AS {spark_to})"
    return f"coalesce({fast}({sa}, {sb}), {wrapped})"


def _stays_float(a: exp.Expression, b: exp.Expression, env: Env) -> bool:
    """Flink keeps FLOAT arithmetic with a FLOAT or integer operand FLOAT; Spark widens it
    to DOUBLE (with a DOUBLE or DECIMAL operand, both give DOUBLE)."""
    if a.find(exp.Interval) or b.find(exp.Interval):  # time arithmetic
        return False
    names = {env.type_of(a).name, env.type_of(b).name}
    return "FLOAT" in names and not names & {"DOUBLE", "DECIMAL"}


def _time_shift(node: exp.Add | exp.Sub, env: Env) -> str:
    """A time of day shifted on an arbitrary day, and its time of day taken again."""
    t = env.type_of(node.this)
    op = "+" if isinstance(node, exp.Add) else "-"
    day = f"make_timestamp(DATE'1970-01-01', {to_spark(node.this, env)})"
    return (f"CAST({day} {op} {to_spark(node.expression, env)} AS "
            f"{t.spark().simpleString()})")


def _like(node: exp.Expression, env: Env) -> str:
    escape = None
    if isinstance(node, exp.Escape):
        escape, node = node.expression, node.this
        if not (isinstance(escape, exp.Literal) and escape.is_string and len(escape.name) == 1):
            raise Unsupported("LIKE .. ESCAPE needs a one-character string literal", escape)
    if not isinstance(node, exp.Like):
        raise Unsupported(f"ESCAPE after {node.key.upper()} is not supported", node)
    s, pattern = to_spark(node.this, env), to_spark(node.expression, env)
    op = "NOT LIKE" if node.args.get("negate") else "LIKE"
    for side in (node.this, node.expression):
        if env.type_of(side).name != "STRING":
            raise Unsupported(f"LIKE needs strings, got {env.type_of(side).sql()}", node)
    if escape is not None:
        return f"({s} {op} {pattern} ESCAPE {escape.sql(dialect='spark')})"
    # No escape character in Flink: a backslash in the pattern is an ordinary character.
    return f"({s} {op} replace({pattern}, '\\\\', '\\\\\\\\'))"
