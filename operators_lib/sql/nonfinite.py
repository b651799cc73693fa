"""NaN and ±Infinity in FLOAT / DOUBLE input: refused where twinflow cannot give Flink's answer.

Both modes keep NaN and ±Infinity through projections, and Flink and Spark agree there. Where
they do not, the run stops before anything runs (exit 2), naming the column and the construct:

- NaN reaching an OVER, JOIN, GROUP BY or TopN: the stream operators run on pandas, which has no
  NaN apart from NULL; and Flink is not consistent itself (measured with Flink 2.3: MIN / MAX
  keep a NaN only if it came first; a streaming join matches NaN keys, a batch join does not;
  a streaming TopN ordered by a NaN column fails).
- NaN in a comparison (WHERE, CASE, IN, BETWEEN, GREATEST / LEAST): Flink compares by IEEE 754
  (NaN = NaN is FALSE, NaN > 1 is FALSE), Spark as the largest value equal to itself.
- SUM / AVG over ±Infinity in an OVER or GROUP BY: Flink's streaming sums retract a row by
  subtracting it, so once an Infinity leaves a window the sum is NaN (∞ − ∞) where its batch
  mode and twinflow recompute a number. STDDEV_* / VAR_* (Welford's M2) over ±Infinity in a
  GROUP BY or window: NaN (∞ − ∞) at once, which pandas holds as NULL. (Over an OVER window they
  are SUMs.)
- Arithmetic on ±Infinity may give NaN (∞ − ∞, 0 × ∞): its result counts as NaN above, and it
  must not be compared either. Comparing an Infinity itself is exact.
"""

from __future__ import annotations

from sqlglot import exp, parse_one

from operators_lib.errors import InputError
from operators_lib.plan import (
    Aggregate,
    Correlate,
    Filter,
    Join,
    Node,
    Over,
    Project,
    Rank,
    Scan,
    SessionRows,
    WindowAggregate,
    WindowRows,
    children,
)

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ,
                exp.NullSafeNEQ, exp.Between, exp.In, exp.Greatest, exp.Least)
_SUMS = ("SUM", "AVG")
Origins = dict[str, str]  # lower-case column -> the input column its NaN / Infinity is from


# Per lower-case table name, per FLOAT / DOUBLE column: the input position of its first NaN and
# its first ±Infinity, None where it has none (ingest.Parsed.nonfinite).
Found = dict[str, dict[str, list[int | None]]]


def check(plan: Node, inputs: Found) -> None:
    """Raise InputError where NaN or ±Infinity of ``inputs`` reach a construct listed in the
    module docstring."""
    _walk(plan, inputs)


def _walk(node: Node, inputs: Found) -> tuple[Origins, Origins]:
    """(columns of ``node`` that may hold NaN, columns that may hold ±Infinity)."""
    if isinstance(node, Scan):
        return _scan(node, inputs)
    below = [_walk(c, inputs) for c in children(node)]
    nan = {k: v for n, _ in below for k, v in n.items()}
    inf = {k: v for _, i in below for k, v in i.items()}
    if not nan and not inf:
        return nan, inf
    if isinstance(node, Filter):
        _comparisons(node.condition, nan, inf, "WHERE")
        return nan, inf
    if isinstance(node, (WindowRows, SessionRows, Correlate)):  # the columns pass through
        return nan, inf
    if isinstance(node, Project):
        out_nan, out_inf = {}, {}
        for name, sql in node.exprs:
            tree = parse_one(sql, read="spark")
            if isinstance(tree, exp.Column):  # the column itself
                col = tree.name.lower()
                if col in nan:
                    out_nan[name.lower()] = nan[col]
                if col in inf:
                    out_inf[name.lower()] = inf[col]
                continue
            _comparisons(tree, nan, inf, f"the expression of {name}")
            origin = next((o for c, o in {**inf, **nan}.items() if c in _columns(tree)), None)
            if origin:  # computed from NaN or ±Infinity: may be either
                out_nan[name.lower()] = out_inf[name.lower()] = origin
        return out_nan, out_inf
    kind = {Over: "an OVER aggregation", Join: "a JOIN", Aggregate: "a GROUP BY",
            Rank: "a TopN / deduplication", WindowAggregate: "a window aggregate"}[type(node)]
    used = {c for c in nan if c in _operands(node)}
    if used:
        col = sorted(used)[0]
        raise InputError(f"{nan[col]} holds NaN, which reaches {kind}: twinflow refuses NaN "
                         "there (its stream operators cannot tell NaN from NULL, and Flink "
                         "treats NaN differently in its streaming and batch modes)")
    aggs = node.aggs if isinstance(node, (Over, Aggregate, WindowAggregate)) else ()
    for a in aggs:
        origin = inf.get((a.arg or "").lower())
        # A window aggregate never retracts: its sums are Flink's in both modes.
        if a.func in _SUMS and origin and not isinstance(node, WindowAggregate):
            raise InputError(f"{origin} holds ±Infinity, which reaches {a.func} in {kind}: "
                             "Flink's streaming sum turns it into NaN once the row is retracted "
                             "(∞ − ∞), unlike its batch mode: twinflow refuses it")
        if a.func == "M2" and origin:
            raise InputError(f"{origin} holds ±Infinity, which reaches a statistical aggregate "
                             f"(STDDEV_* / VAR_*) in {kind}: Flink's Welford steps make it NaN "
                             "(∞ − ∞), which the stream operators cannot tell from NULL: "
                             "twinflow refuses it")
    out_inf = {c: o for c, o in inf.items() if c in {f.name.lower() for f in node.fields}}
    out_inf.update({a.name.lower(): inf[a.arg.lower()]  # MIN / MAX
                    for a in aggs if a.arg and a.arg.lower() in inf})
    return {}, out_inf


def _scan(node: Scan, inputs: Found) -> tuple[Origins, Origins]:
    table = node.table
    found = inputs.get(table.name.lower(), {})
    nan, inf = {}, {}
    for c in table.physical:
        first_nan, first_inf = found.get(c.name, [None, None])
        where = f"table {table.name}, column {c.name}"
        if first_nan is not None:
            nan[c.name.lower()] = f"{where} (input row {first_nan})"
        if first_inf is not None:
            inf[c.name.lower()] = f"{where} (input row {first_inf})"
    for c in table.columns:
        if c.expr is not None:
            origin = next((o for n, o in {**inf, **nan}.items() if n in _columns(c.expr)), None)
            if origin:
                nan[c.name.lower()] = inf[c.name.lower()] = origin
    return nan, inf


def _comparisons(sql: str | exp.Expression, nan: Origins, inf: Origins, where: str) -> None:
    tree = parse_one(sql, read="spark") if isinstance(sql, str) else sql
    for cmp in tree.find_all(*_COMPARISONS):
        for operand in cmp.iter_expressions():
            cols = _columns(operand)
            bad = [nan[c] for c in cols if c in nan] or [
                inf[c] for c in cols if c in inf and not isinstance(operand, exp.Column)]
            if bad:
                raise InputError(f"{bad[0]} holds NaN or ±Infinity, which {where} compares: "
                                 "Flink compares NaN by IEEE 754 (NaN = NaN is FALSE), Spark "
                                 "as a value greater than any other: twinflow refuses it")


def _columns(tree: exp.Expression) -> set[str]:
    return {c.name.lower() for c in tree.find_all(exp.Column)}


def _operands(node: Node) -> set[str]:
    """The input columns a stateful operator's stream processor receives."""
    if isinstance(node, (Aggregate, WindowAggregate)):
        names = [*node.group_by, *(a.arg for a in node.aggs if a.arg)]
    else:
        names = [f.name for c in children(node) for f in c.fields]
    return {n.lower() for n in names}
