"""Logical operators (frozen dataclasses) shared by the batch and the stream planner.

Scalar expressions are kept as Spark SQL text (transpiled once from the Flink dialect), so both
planners evaluate them with the same Spark functions and cannot drift apart. Every relation also
carries the hidden column ``tw__rownum`` (arrival order in the input), which is how ties in time
are ordered in both modes, exactly as Flink orders rows that arrive with equal timestamps.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from operators_lib.catalog import TableDef
from operators_lib.types import NESTED, FlinkType

# arrival order of a row within its table (0-based; below 0, marker rows: -1 the end-of-input
# marker, SWEEP_FIRST, END_FIRST)
ROWNUM = "tw__rownum"
EMIT_TS = "tw__ts"  # event time (epoch ms) at which a stream operator emitted the row
SEQ = "tw__seq"  # a changelog row's position in its micro-batch's output (Spark's partition, row)
LINE = "tw__line"  # a changelog row's result columns as its CSV line (output.changelog_line)
OP = "tw__op"  # row kind in stream mode: +I, -U, +U, -D, LATE (a dropped late row), TTL (a
# key whose state expired in the last changelog operator), TTL_UPSTREAM (expired further up)
TTL_KEY = "tw__ttlkey"  # hash of the key of the last changelog operator (join key, group key)
# Row kinds that report, not change, the result. LATE_WINDOW: a row left out of one of its
# windows, which had fired when it arrived (HOP, CUMULATE), the window's end in tw__ts.
# SESSION_SPLIT: a row in a new session because the session it touches had fired when it
# arrived (that session's end in tw__ts), which batch semantics cannot reproduce.
MARKERS = ("LATE", "TTL", "TTL_UPSTREAM", "LATE_WINDOW", "SESSION_SPLIT")
LATE, TTL, TTL_UPSTREAM, LATE_WINDOW, SESSION_SPLIT = MARKERS
# A state sweep (compaction.py): one row per bucket, tw__rownum = SWEEP_FIRST - bucket. It
# carries no data and moves no watermark; each changelog operator (stream/rows.py) drops its
# bucket's idle state under the state TTL and passes the row on (tw__op SWEEP); the sink
# never writes it.
SWEEP_FIRST = -2
SWEEP = "SWEEP"
# The end of input announced in the last staged part (``ends_in_last_part``): one row per
# bucket, tw__rownum = END_FIRST - bucket, no data. It moves the watermark past every event
# time, as the end-of-input marker does (tw__rownum -1, a file of its own), and tells the
# operator in the micro-batch that reads it that no row follows: it fires everything then,
# instead of storing it for the next micro-batch to fire.
END_FIRST = -(1 << 20)
# Where the rows an operator fires at the end of input go in its micro-batch's changelog:
# after its other rows, as when the end is a micro-batch of its own (tw__ts + END_MS; event
# times span +-2^48 ms, years 0001-9999).
END_MS = 1 << 50
BATCH = "tw__batch"  # a changelog row's micro-batch (and an input row's, under tests/harness.py)
HIDDEN = (OP, EMIT_TS, ROWNUM, TTL_KEY, BATCH)
# A changelog in emission order: by micro-batch, event time, arrival, then the order the
# operator emitted a key's rows in (a retraction before its replacement).
PLACE = (BATCH, EMIT_TS, ROWNUM, SEQ)


def late_tag(table_name: str) -> int:
    """The ``tw__ts`` of a LATE marker that names its table (0: the query's one late-dropping
    table, runs/streaming.late_source), for queries whose window operators read several tables."""
    return zlib.crc32(table_name.lower().encode()) % (2**31 - 1) + 1


def quote(name: str) -> str:
    """``name`` as a Spark SQL column reference."""
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Field:
    name: str
    type: FlinkType
    time_attr: str | None = None  # "rowtime" | "proctime" | None
    # "table": a table's column, of its declared type; "json": a projection's JSON_OBJECT /
    # JSON_ARRAY (what sql/functions/json_build.py needs to know of a column)
    origin: str | None = None


@dataclass(frozen=True)
class Scan:
    table: TableDef
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Filter:
    child: Node
    condition: str  # Spark SQL
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Project:
    child: Node
    exprs: tuple[tuple[str, str], ...]  # (output name, Spark SQL)
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Frame:
    """``ROWS|RANGE BETWEEN (UNBOUNDED | n | INTERVAL) PRECEDING AND CURRENT ROW``."""

    kind: str  # "ROWS" | "RANGE"
    # rows (ROWS) or milliseconds (RANGE); None = UNBOUNDED
    preceding: int | None
    # RANGE BETWEEN n PRECEDING: n in the ORDER BY column's own units (a numeric ORDER BY,
    # batch mode only), not milliseconds
    numeric: bool = False

    def sql(self) -> str:
        if self.preceding is None:
            start = "UNBOUNDED"
        else:
            start = str(self.preceding) if self.kind == "ROWS" or self.numeric else \
                f"{self.preceding} ms"
        return f"{self.kind} BETWEEN {start} PRECEDING AND CURRENT ROW"


@dataclass(frozen=True)
class AggCall:
    func: str  # COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE, LISTAGG, M2 (sql/over.py)
    arg: str | None  # input column (None for COUNT(*))
    arg_type: FlinkType | None
    name: str  # output column
    type: FlinkType  # Flink's result type
    distinct: bool = False  # agg(DISTINCT arg)
    separator: str | None = None  # LISTAGG's


@dataclass(frozen=True)
class Over:
    """OVER aggregation: one output row per input row, its aggregates over the frame."""

    child: Node
    partition_by: tuple[str, ...]  # input columns
    order_by: str  # a time attribute of the input (batch mode: any column)
    # "rowtime" | "proctime" | None: ordered by a column that is no time attribute, which
    # Flink's batch mode answers and its streaming mode refuses: batch mode only
    time_kind: str | None
    frame: Frame
    aggs: tuple[AggCall, ...]
    source: TableDef  # the table whose rows reach this operator (for late-row reporting)
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Calc:
    """A value a join's residual condition computes from columns of both inputs: ``op``
    ``+``, ``-``, ``*`` or ``||`` over two operands, ``NEG`` over one; an operand is a column
    name or a Calc. ``type``: the result's Flink type name (INT, BIGINT, SMALLINT, TINYINT,
    DOUBLE, STRING); integer overflow is an error, as in Spark (ANSI mode)."""

    op: str
    args: tuple
    type: str


@dataclass(frozen=True)
class Cond:
    """A join's residual (non-equi) condition, in a form both modes evaluate identically.

    ``op`` is ``AND``/``OR``/``NOT`` over ``args`` (Conds), ``COL`` (a boolean column of one
    side, in ``args[0]``), or a comparison ``=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``, ``<=>``
    between two operands: a left column and a right column of the same type, or, where an
    operand combines both inputs, column names and Calcs. Every expression of a single side is
    computed by Spark before the join (hidden columns).
    """

    op: str
    args: tuple


@dataclass(frozen=True)
class Interval:
    """An interval join's time bounds: ``right_time + lower_ms <= left_time <= right_time +
    upper_ms`` (inclusive; Flink turns ``<`` into ``<=`` with 1 ms less), over a rowtime
    attribute of each input."""

    left_time: str
    right_time: str
    lower_ms: int
    upper_ms: int


@dataclass(frozen=True)
class Temporal:
    """A temporal join (``JOIN versioned FOR SYSTEM_TIME AS OF left_time``): each left row
    joins, per join key, the right row (version) with the latest ``right_time`` at or before
    its own ``left_time``. ``dedup``: the right side is a deduplication keeping the latest row
    per key (its input's rows are the versions, but a row older than its key's latest when it
    arrives is none)."""

    left_time: str
    right_time: str | None  # None: a processing-time join of a table without a rowtime
    dedup: bool = False
    # "proctime" (FOR SYSTEM_TIME AS OF a PROCTIME() column): each left row joins its key's
    # latest version when it arrives (stream/proctime_temporal_join.py); batch mode joins the
    # latest version of the whole input.
    time_kind: str = "rowtime"
    # A lookup join (processing time, the right side a table with neither PRIMARY KEY nor
    # WATERMARK, as Flink's lookup sources): each left row joins every row of the table with
    # its keys, the table as its input stood when the run began (stream/lookup_join.py).
    lookup: bool = False


@dataclass(frozen=True)
class Join:
    """A regular join: no time bounds, results retracted and re-emitted as the inputs change;
    or, with ``interval``, Flink's interval join (stream/interval_join.py): append-only, state
    kept only while the watermark lets a row still match; with ``temporal``, Flink's event-time
    temporal join (stream/temporal_join.py).

    ``kind``: INNER, LEFT, RIGHT, FULL, or SEMI / ANTI (left rows with / without a match: IN,
    EXISTS, NOT IN, NOT EXISTS). ``left_keys[i] = right_keys[i]`` are the equality keys
    (columns of each child, same types; NULL never matches); none: one global partition.
    ``fields`` are the left fields followed by the right fields (names unique); SEMI/ANTI: the
    left fields.
    """

    left: Node
    right: Node
    kind: str
    left_keys: tuple[str, ...]
    right_keys: tuple[str, ...]
    residual: Cond | None
    fields: tuple[Field, ...]
    ttl_ms: int | None = None  # state idle longer than this is dropped (table.exec.state.ttl)
    # A window join (stream/window_join.py): both sides window aggregates ("aggregate") or
    # window TVFs' rows ("rows") joined on their window start and end (and keys); each window
    # is joined once, when it fires, insert-only, as Flink's window join.
    windowed: str | None = None
    interval: Interval | None = None
    temporal: Temporal | None = None


@dataclass(frozen=True)
class Aggregate:
    """Unbounded GROUP BY: one row per group, updated (-U/+U) as rows arrive or retract."""

    child: Node
    group_by: tuple[str, ...]  # input columns; empty: one global group
    aggs: tuple[AggCall, ...]
    fields: tuple[Field, ...]  # group columns, then aggregate outputs
    ttl_ms: int | None = None  # state idle longer than this is dropped (table.exec.state.ttl)
    ranked: bool = False  # a TopN ranks the rows (ties by arrival: the last row that changed it)


@dataclass(frozen=True)
class TimeWindow:
    """Flink's event-time window assigners, aligned to the epoch plus ``offset_ms``:
    TUMBLE(size): ``[s, s + size)``; HOP(slide, size): every ``slide``, ``size`` long;
    CUMULATE(step, size): windows ``[s, s + step)``, ``[s, s + 2 step)`` .. ``[s, s + size)``
    of each ``size``-long period starting at ``s``; SESSION(gap): a row's window is ``[t, t +
    gap)``, and windows of a key that overlap or touch merge into one session. GIVEN: a row's
    window is the one it carries (a window aggregate's result grouped by its start and end:
    columns ``WindowAggregate.bounds[:2]`` of the input)."""

    kind: str  # TUMBLE | HOP | CUMULATE | SESSION | GIVEN
    size_ms: int  # SESSION: the gap
    step_ms: int  # HOP's slide, CUMULATE's step; TUMBLE, SESSION: the size
    offset_ms: int = 0


@dataclass(frozen=True)
class WindowAggregate:
    """GROUP BY a time window (a group window such as ``TUMBLE(ts, ..)``, or a window TVF's
    ``window_start, window_end``) and keys: one row per key and window, emitted once when the
    watermark passes the window's end; a row whose windows have all fired is late.

    ``bounds`` name the window start, end and time (end - 1 ms, a rowtime) columns of
    ``fields`` (group columns, bounds, aggregates)."""

    child: Node
    time_col: str  # the child's rowtime attribute
    window: TimeWindow
    group_by: tuple[str, ...]
    aggs: tuple[AggCall, ...]
    bounds: tuple[str, str, str]
    fields: tuple[Field, ...]
    # The table whose late rows this operator drops; None: its input is another window
    # aggregate's result (a cascade) or an interval join's, whose rows are never late here,
    # as in Flink (they arrive before the watermark that fired them, or that ``hold_ms``
    # holds back).
    source: TableDef | None
    # "proctime": windows of processing time (stream mode only): a row's time is its
    # micro-batch's, a window fires once processing time passes its end, no row is late.
    time_kind: str = "rowtime"
    # Over an interval join's result: Flink's join holds the watermark back by its interval
    # (max(-lower, upper)); windows fire once the watermark passes their end plus this.
    hold_ms: int = 0


@dataclass(frozen=True)
class WindowRows:
    """A window TVF's rows: each input row once per window of its time, with the window's
    start, end and time (end - 1 ms, a rowtime) appended. Stateless: Flink emits each row at
    once and drops none (nothing waits for the watermark)."""

    child: Node
    time_col: str
    window: TimeWindow
    fields: tuple[Field, ...]  # the child's, then window_start, window_end, window_time


@dataclass(frozen=True)
class SessionRows:
    """A SESSION window TVF's rows: each input row once, with its session's start, end and
    time (end - 1 ms, a rowtime) appended. A session's bounds are known only when it fires, so
    its rows wait until then (as in Flink); a row is late as for a SESSION window aggregate
    (its own window has fired and it merges into no open session)."""

    child: Node
    time_col: str
    window: TimeWindow  # SESSION(gap)
    partition: tuple[str, ...]  # PARTITION BY columns: sessions per key
    fields: tuple[Field, ...]  # the child's, then window_start, window_end, window_time
    source: TableDef  # the table whose late rows it drops


@dataclass(frozen=True)
class Correlate:
    """``child, LATERAL TABLE(f(..)) AS T(..)``: each row of ``child`` joined with each row
    the Python table function returns for it (Flink's Correlate), in both modes alike (a
    stateless step of relational.py). Each output row keeps its input row's changelog kind
    (a retraction retracts the rows the function gives again) and arrival number; ``outer``
    (LEFT JOIN .. ON TRUE): an input row the function gives no rows keeps one, with NULLs."""

    child: Node
    call: str  # Spark SQL: the function's rows as an ARRAY<STRUCT<f0, ..>>
    outer: bool
    fields: tuple[Field, ...]  # the child's, then the function's columns


@dataclass(frozen=True)
class Union:
    """UNION ALL: the rows of every input, each keeping its changelog kind (Flink's Union;
    UNION without ALL is a GROUP BY of all columns over it). Input ``i``'s rows are numbered
    ``tw__rownum * len(inputs) + i``: arrival numbers stay distinct (TopN orders ties by
    them). Columns take the first input's names and the inputs' common types."""

    inputs: tuple[Node, ...]
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class SortKey:
    col: str
    desc: bool
    nulls_first: bool  # Flink's default: ASC NULLS FIRST, DESC NULLS LAST


@dataclass(frozen=True)
class Rank:
    """TopN: ``func() OVER (PARTITION BY .. ORDER BY ..)`` kept to the ranks ``start..end``
    (Flink's Rank node: a ranking function filtered by the enclosing WHERE).

    ``rank_field`` holds the rank number; ``rank_output`` says whether anything above reads it,
    which decides the changelog form (stream/topn.py). ``dedup`` is ``"first"``/``"last"``
    when Flink runs the query as its Deduplicate operator instead (ROW_NUMBER, rank 1 only,
    ORDER BY one time attribute); ``time_kind`` is that attribute's kind.
    """

    child: Node
    func: str  # ROW_NUMBER | RANK | DENSE_RANK
    partition_by: tuple[str, ...]
    order_by: tuple[SortKey, ...]
    start: int
    end: int | None  # None until the enclosing WHERE bounds it (sql/topn.py)
    rank_field: str
    rank_output: bool
    fields: tuple[Field, ...]  # the child's fields, then the rank number
    dedup: str | None = None
    time_kind: str | None = None
    source: TableDef | None = None  # dedup keep-first drops late rows of this table
    # Window TopN / deduplication (stream/window_rank.py): the partition holds the window
    # start and end columns (``window_bounds``) of a window aggregate's result ("aggregate":
    # each window's rows arrive together, when it fires) or of a window TVF's rows ("rows":
    # kept until the window fires). Either way the top rows are emitted once, as +I.
    windowed: str | None = None
    window_bounds: tuple[str, ...] = ()


Node = (Scan | Filter | Project | Over | Join | Aggregate | Rank | WindowAggregate
        | WindowRows | SessionRows | Union | Correlate)


def children(node: Node) -> list[Node]:
    if isinstance(node, Scan):
        return []
    if isinstance(node, Join):
        return [node.left, node.right]
    if isinstance(node, Union):
        return list(node.inputs)
    return [node.child]


def ends_in_last_part(plan: Node) -> bool:
    """Whether a run's staged input announces its end in its last part (END_FIRST): where
    the plan reads one table with a WATERMARK into one stateful operator that fires by event
    time and supports it (OVER, a window aggregate). With a second stateful operator, rows
    fired at the end would reach it after it had seen the end; with a second table, one
    table's end is not the input's."""
    stateful = [n for kind in (Over, Join, Aggregate, WindowAggregate, SessionRows, Rank)
                for n in find(plan, kind)]
    tables = scans(plan)
    return (len(tables) == 1 and tables[0].table.watermark is not None and len(stateful) == 1
            and isinstance(stateful[0], (Over, WindowAggregate))
            and stateful[0].time_kind == "rowtime")


def scans(node: Node) -> list[Scan]:
    if isinstance(node, Scan):
        return [node]
    return [s for c in children(node) for s in scans(c)]


def source_tables(node: Node) -> dict[str, TableDef]:
    """The tables a plan reads, by lower-case name (a self-join's table once), in scan order."""
    return {s.table.name.lower(): s.table for s in scans(node)}


def find(node: Node, kind: type) -> list[Node]:
    found = [node] if isinstance(node, kind) else []
    return found + [n for c in children(node) for n in find(c, kind)]


def nested_keys(node: Node) -> list[tuple[str, str]]:
    """(what, column) for each key or aggregate argument of an ARRAY, MAP or ROW type:
    twinflow's operators hash, order and aggregate plain values only."""
    found = []
    for n in find(node, Aggregate) + find(node, WindowAggregate) + find(node, Over) + find(
            node, Rank) + find(node, Join):
        types = {f.name: f.type for c in children(n) for f in c.fields}
        named = [("a join key", k) for k in getattr(n, "left_keys", ()) + getattr(
            n, "right_keys", ())]
        named += [("a GROUP BY key", k) for k in getattr(n, "group_by", ())]
        named += [("a PARTITION BY key", k) for k in getattr(n, "partition_by", ())]
        named += [("an ORDER BY key", k.col) for k in getattr(n, "order_by", ())
                  if isinstance(k, SortKey)]
        named += [(f"an argument of {a.func}", a.arg) for a in getattr(n, "aggs", ()) if a.arg]
        found += [(what, col) for what, col in named
                  if col in types and types[col].name in NESTED]
    return found


def batch_only(node: Node) -> list[Over]:
    """The OVER aggregates ordered by a column that is no time attribute (batch mode only)."""
    return [o for o in find(node, Over) if o.time_kind is None]


def processing_time_windows(node: Node) -> list[WindowAggregate]:
    """The window aggregates of processing time (they make the stream's watermark processing
    time, stream/runner.py, and exist in stream mode only)."""
    return [w for w in find(node, WindowAggregate) if w.time_kind == "proctime"]


def processing_time_joins(node: Node) -> list[Join]:
    """The temporal joins of processing time: their results depend on when rows arrive (not
    a lookup join's: its table does not change during a run)."""
    return [j for j in find(node, Join) if j.temporal and j.temporal.time_kind == "proctime"
            and not j.temporal.lookup]


def lookup_scans(node: Node) -> list[Scan]:
    """The scans of lookup joins' tables: read whole, not streamed (stream/lookup_join.py)."""
    return [s for j in find(node, Join) if j.temporal and j.temporal.lookup
            for s in scans(j.right)]


def held_time(node: Node) -> list[Join | Union]:
    """What in ``node``'s input feeds an event-time operator rows whose time the watermark
    does not bound as twinflow's operators expect: interval and temporal joins (Flink holds
    the watermark back behind their results) and unions (rows of several tables, each with
    its own watermark and late rows)."""
    return [j for j in find(node, Join) if j.interval is not None or j.temporal is not None
            ] + find(node, Union)


def unique_key(node: Node) -> tuple[str, ...] | None:
    """Columns whose values identify a row of ``node``'s (materialized) result, if known:
    a declared PRIMARY KEY, GROUP BY keys (a global aggregate: ``()``, at most one row),
    carried through filters, OVER and projections that keep the key columns."""
    if isinstance(node, Scan):
        pk = node.table.primary_key
        names = {f.name.lower(): f.name for f in node.fields}
        return tuple(names[c.lower()] for c in pk) if pk and all(
            c.lower() in names for c in pk) else None
    if isinstance(node, Aggregate):
        return node.group_by
    if isinstance(node, WindowAggregate):
        return (*node.group_by, node.bounds[0], node.bounds[1])
    if isinstance(node, (Filter, Over)):
        return unique_key(node.child)
    if isinstance(node, Rank):
        # Its rows are some of the child's; a top-1 keeps one row per partition.
        return node.partition_by if node.func == "ROW_NUMBER" and node.end == 1 else \
            unique_key(node.child)
    if isinstance(node, Project):
        key = unique_key(node.child)
        if key is None:
            return None
        renamed = {}
        for name, sql in node.exprs:
            for k in key:
                if sql == quote(k) and k not in renamed:
                    renamed[k] = name
        return tuple(renamed[k] for k in key) if all(k in renamed for k in key) else None
    return None


def append_only(node: Node) -> bool:
    """Does ``node`` only ever insert rows (no retractions) in stream mode?"""
    if isinstance(node, (Scan, Over, WindowAggregate)):
        return True
    if isinstance(node, (Filter, Project, WindowRows, Correlate)):
        return append_only(node.child)
    if isinstance(node, Join):
        if node.windowed or node.interval or node.temporal:  # joined once, never retracted
            return True
        return node.kind == "INNER" and append_only(node.left) and append_only(node.right)
    if isinstance(node, Rank):
        return node.windowed is not None or first_row_dedup(node)
    if isinstance(node, Union):
        return all(append_only(i) for i in node.inputs)
    return False


_RISING = {"COUNT": "up", "MAX": "up", "MIN": "down"}


def monotonicity(node: Node, col: str) -> str | None:
    """How column ``col`` of a row (identified by ``unique_key``) can change as the input
    grows: ``"const"``, ``"up"``, ``"down"``, or None (either way). As Flink's
    FlinkRelMdModifiedMonotonicity, for what twinflow needs: GROUP BY keys are constant; COUNT
    and MAX only rise and MIN only falls over an append-only input (SUM may do either); MIN and
    MAX start as NULL while every argument is NULL. A filter (HAVING) may retract a row, state
    TTL restart a group: None."""
    if isinstance(node, Project):
        sql = dict(node.exprs).get(col)
        fields = {quote(f.name): f.name for f in node.child.fields}
        return monotonicity(node.child, fields[sql]) if sql in fields else None
    if isinstance(node, Aggregate):
        if col in node.group_by:
            return "const"
        if node.ttl_ms:
            return None  # an expired group starts afresh: its COUNT falls back to 1
        call = next(a for a in node.aggs if a.name == col)
        return _RISING.get(call.func) if append_only(node.child) else None
    return None


def state_ttl(plan: Node) -> bool:
    """Whether an operator of the plan drops state idle longer than table.exec.state.ttl."""
    return any(n.ttl_ms for n in find(plan, Join) + find(plan, Aggregate))


def first_row_dedup(node: Rank) -> bool:
    """Deduplication keeping the first row by event time of an append-only input (Flink's
    row-time Deduplicate, stream/dedup.py): it waits for the watermark and drops late rows."""
    return node.dedup == "first" and node.time_kind == "rowtime" and append_only(node.child)
