"""A query's plan from its SQL, and the record of it a state directory keeps.

Every run records in its state's manifest the query it ran: the SQL files' names, texts and
directories (where a Python UDF's module is found), the TopN split, the micro-batch size and
the state layout (``record_query``). A state
directory thus says by itself what it is the state of: the state commands (compaction,
verification) rebuild the stream's plan from it (``recorded_plan``) without the files or the
DAG config it came from.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from operators_lib.errors import InputError
from operators_lib.plan import Node
from operators_lib.sql.planner import compile_query
from operators_lib.sql.script import Script, script_of
from operators_lib.state.manifest import Manifest, RecordedQuery, SqlFile
from operators_lib.stream.layout import STATE_LAYOUT
from operators_lib.topn_split import split_topn, splittable


def plan_query(script: Script, spark: SparkSession, topn_split: int) -> Node:
    """The query's plan, its TopNs split in two levels by ``topn_split`` (> 1)."""
    plan = compile_query(script, spark)
    if topn_split < 1:
        raise InputError(f"the TopN split factor must be at least 1, got {topn_split}")
    if topn_split > 1 and not splittable(plan):
        raise InputError(f"a TopN split factor ({topn_split}) was given, but the query has no "
                         "TopN to split (ROW_NUMBER / RANK / DENSE_RANK .. WHERE rownum <= N, "
                         "not a deduplication)")
    return split_topn(plan, topn_split)


def record_query(state: Path, sql: list[Path], topn_split: int, rows_per_batch: int) -> None:
    """Record in the state's manifest the query its stream runs (module docstring)."""
    record = Manifest.load(state)
    record.query = RecordedQuery(
        sql=[SqlFile(file=Path(p).name, text=Path(p).read_text(),
                     dir=str(Path(p).resolve().parent)) for p in sql],
        topn_split=topn_split, rows_per_batch=rows_per_batch, state_layout=STATE_LAYOUT)
    record.save(state)


def recorded_script(query: RecordedQuery) -> Script:
    """A recorded query's script (its SQL parsed as ``load_script`` parses the files)."""
    return script_of([(s.file, s.text) for s in query.sql],
                     {s.file: Path(s.dir) for s in query.sql if s.dir is not None})


def sql_texts(query: RecordedQuery) -> list[str]:
    """The SQL texts of a recorded query, in order."""
    return [s.text for s in query.sql]


def sql_changed(query: RecordedQuery | None, sql: list[Path]) -> bool:
    """Whether a recorded query's SQL differs from the files ``sql`` (no record: False)."""
    return query is not None and sql_texts(query) != [Path(p).read_text() for p in sql]


def recorded_query(state: Path) -> RecordedQuery:
    """The query the state's stream runs (``record_query``)."""
    query = Manifest.load(state).query
    if query is None:
        raise InputError(f"{state}: the state does not record its query (it was written by an "
                         "earlier version of twinflow): run the query once, then try again")
    return query


def recorded_plan(state: Path, spark: SparkSession) -> Node:
    """The stream's plan, rebuilt from the state's record of its query; InputError if the
    state was written in another state layout (stream/layout.py: never read by other code)."""
    query = recorded_query(state)
    if query.state_layout != STATE_LAYOUT:
        raise InputError(f"{state}: the state was written in another state layout "
                         f"({query.state_layout}; this twinflow's: {STATE_LAYOUT}): "
                         "run the query once (it rebuilds the state), then try again")
    return plan_query(recorded_script(query), spark, query.topn_split)
