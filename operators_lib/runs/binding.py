"""A scheduled query's state bound to what built it: the query's SQL, the TopN split factor and
the state layout (stream/layout.py), recorded in its manifest. When one of them changed (a new
version of the query; the hotspot DAG changed the split; an upgrade changed how state is
stored), the stage step retires the checkpoint, its changelog, offer logs, result and left-out
rows (one generation is kept under ``retired/``, with the SQL it ran, for a manual rollback)
and the stream rebuilds the state by replaying every staged input file before the new ones.
A re-run, parity or audit of an interval is refused when the state it needs is gone.
"""

from __future__ import annotations

from operators_lib.errors import InputError
from operators_lib.io import offers, storage
from operators_lib.io.output import write_json
from operators_lib.ops.reports import Rebuilt
from operators_lib.runs.spec import RunSpec
from operators_lib.scan import staged_schema
from operators_lib.sql import load_script
from operators_lib.state import lifecycle
from operators_lib.state.lifecycle import RunRecord
from operators_lib.state.manifest import Manifest, RecordedQuery
from operators_lib.state.queries import recorded_script, sql_changed
from operators_lib.stream.layout import STATE_LAYOUT


def same_build(spec: RunSpec) -> None:
    """InputError unless the state was built by this twinflow's layout (stream/layout.py) and
    the config's SQL: a re-run, parity or audit of a state that an upgrade or a new version of
    the query has not yet rebuilt would read it with other code or another plan."""
    manifest = Manifest.load(spec.state)
    layout = manifest.state_layout
    if layout != STATE_LAYOUT:
        raise InputError(f"the query's state was written in another state layout ({layout}; "
                         f"this twinflow's: {STATE_LAYOUT}): the query's next scheduled run "
                         "rebuilds it, after which intervals before it cannot be re-run")
    if sql_changed(manifest.query, spec.sql):
        raise InputError(f"query {spec.name}: its SQL changed since its state was built: the "
                         "query's next scheduled run rebuilds the state, after which "
                         "intervals before it cannot be re-run")


def bind_state(spec: RunSpec) -> Rebuilt | None:
    """Bind the state to the query's SQL, the config's TopN split factor and this twinflow's
    state layout (stream/layout.py): when one changed (a new version of the query; the
    hotspot DAG raised the split; an upgrade changed how state is stored), retire the
    checkpoint, changelog, offer logs, result and left-out rows (see the module docstring);
    the offer step then offers every staged file to the new one. Each step can be
    repeated after a crash: the checkpoint moves last, the manifest is saved last. Returns what
    was rebuilt and why (None: nothing)."""
    state = spec.state
    manifest = Manifest.load(state)
    old, new = manifest.topn_split, spec.topn_split
    layout, query = manifest.state_layout, manifest.query
    new_sql = sql_changed(query, spec.sql)
    if new_sql:
        _same_tables(spec, query, manifest)
    if old == new and layout == STATE_LAYOUT and not new_sql:
        return None
    retired, retiring = state / "retired", state / ".retiring"
    if (state / "checkpoint").exists():
        retiring.mkdir(parents=True, exist_ok=True)
        (retiring / "topn_split").write_text(f"{old}\n")
        (retiring / "state_layout").write_text(f"{layout}\n")
        # the SQL it ran
        write_json(retiring / "query.json", query.as_json() if query else {})
        for log in (state / "staged").glob(f"*/{offers.LOG}"):  # what the stream was offered
            (retiring / "offers").mkdir(exist_ok=True)
            storage.replace(log, retiring / "offers" / log.parent.name)
        # ("source": the hard-linked offers of layouts before offer logs)
        for name in ("changelog", "late", "result", "source", "checkpoint"):
            if (state / name).exists():
                storage.replace(state / name, retiring / name)
    if retiring.exists():  # the previous generation goes only once this one is complete
        storage.rmtree(retired)
        storage.replace(retiring, retired)
    manifest.topn_split, manifest.state_layout = new, STATE_LAYOUT
    # Runs recorded before refer to the retired changelog (stream_increment's run records).
    manifest.generation += 1
    manifest.save(state)
    replayed = manifest.staged_rows
    if not replayed:
        return None  # nothing staged yet: the first run starts with the new split and layout
    return Rebuilt(reason="the query's SQL changed" if new_sql else
                   "the TopN split changed" if old != new else
                   "twinflow's state layout changed (an upgrade)",
                   from_split=old, to_split=new, from_layout=layout, to_layout=STATE_LAYOUT,
                   retired=str(retired), replayed_input_rows=replayed)


def _same_tables(spec: RunSpec, recorded: RecordedQuery, manifest: Manifest) -> None:
    """InputError if the new SQL declares a table with staged input with other columns: its
    retained input, staged with the old ones, cannot be replayed into the new state."""
    before = recorded_script(recorded).catalog.tables
    after = load_script(spec.sql).catalog.tables
    for key in manifest.tables:
        if key not in before or key not in after:
            continue
        old, new = (staged_schema(t[key]).simpleString() for t in (before, after))
        if old != new:
            raise InputError(
                f"query {spec.name}: the new SQL declares table {after[key].name} with other "
                f"columns than the input it has retained was staged with ({old} -> {new}): "
                "that input cannot rebuild the new query's state; give the changed query a "
                "new name (a new state)")


def check_interval(spec: RunSpec) -> RunRecord | None:
    """The record of an interval that ran before (its re-run rebuilds that result), or None
    for a new interval, which must come after every recorded one: the stream's state has
    moved past an older interval and cannot process input as of then."""
    state, run_key = spec.state, spec.key
    record = lifecycle.run_record(state, run_key)
    generation = Manifest.load(state).generation
    if record is not None:
        same_build(spec)
        if record.generation != generation:
            raise InputError(
                f"interval {run_key} ran before the query's state was rebuilt (its SQL, TopN "
                "split or twinflow's state layout changed), so its result cannot be rebuilt "
                "from the new state; its published version stands")
        return record
    newest = max(lifecycle.run_keys(state), default=None)
    if newest is not None and run_key < newest:
        raise InputError(
            f"interval {run_key} comes before interval {newest}, which the query's stream has "
            "already processed: a new interval must come after it (a run of an interval that "
            "ran before re-publishes its result; for past data use a batch backfill)")
    return None
