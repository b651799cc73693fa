"""Logical operators (frozen dataclasses) shared by the batch and the stream planner.

Scalar expressions are kept as Spark SQL text (transpiled once from the Flink dialect), so both
planners evaluate them with the same Spark functions and cannot drift apart. Every relation also
carries the hidden column ``tw__rownum`` (arrival order in the input), which is how ties in time
are ordered in both modes, exactly as Flink orders rows that arrive with equal timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass

from operators_lib.catalog import TableDef
from operators_lib.types import FlinkType

ROWNUM = "tw__rownum"  # arrival order of a row within its table (0-based; -1 = end-of-input marker)
EMIT_TS = "tw__ts"  # event time (epoch ms) at which a stream operator emitted the row
OP = "tw__op"  # row kind in stream mode: +I, -U, +U, -D, or LATE for a dropped late row
HIDDEN = (OP, EMIT_TS, ROWNUM)


@dataclass(frozen=True)
class Field:
    name: str
    type: FlinkType
    time_attr: str | None = None  # "rowtime" | "proctime" | None


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
    preceding: int | None  # rows (ROWS) or milliseconds (RANGE); None = UNBOUNDED

    def sql(self) -> str:
        if self.preceding is None:
            start = "UNBOUNDED"
        else:
            start = str(self.preceding) if self.kind == "ROWS" else f"{self.preceding} ms"
        return f"{self.kind} BETWEEN {start} PRECEDING AND CURRENT ROW"


@dataclass(frozen=True)
class AggCall:
    func: str  # COUNT, SUM, AVG, MIN, MAX
    arg: str | None  # input column (None for COUNT(*))
    arg_type: FlinkType | None
    name: str  # output column
    type: FlinkType  # Flink's result type


@dataclass(frozen=True)
class Over:
    """OVER aggregation: one output row per input row, its aggregates over the frame."""

    child: Node
    partition_by: tuple[str, ...]  # input columns
    order_by: str  # a time attribute of the input
    time_kind: str  # "rowtime" | "proctime"
    frame: Frame
    aggs: tuple[AggCall, ...]
    source: TableDef  # the table whose rows reach this operator (for late-row reporting)
    fields: tuple[Field, ...]


Node = Scan | Filter | Project | Over


def scans(node: Node) -> list[Scan]:
    if isinstance(node, Scan):
        return [node]
    return scans(node.child)


def find(node: Node, kind: type) -> list[Node]:
    found = [node] if isinstance(node, kind) else []
    return found if isinstance(node, Scan) else found + find(node.child, kind)
