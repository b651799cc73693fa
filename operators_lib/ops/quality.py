"""Great Expectations gates on twinflow outputs, through the GX file context in the repository.

The rows are validated where they are, as a Spark DataFrame, by the Spark application that
made them (GX's Spark data source: each expectation is a Spark job on the executors); no
process loads an output whole (runs/gating.py gates a scheduled run in its driver).

The context is ``expectations/gx/`` (or ``$TWINFLOW_GX_ROOT/gx/``), in GX's own layout: per
suite ``expectations/<suite>.json`` (static rules: key columns not NULL, aggregate bounds,
...), a validation definition ``validation_definitions/<suite>.json`` (the suite over the
output's rows: the Spark data source ``twinflow``, one dataframe asset per suite) and a
checkpoint ``checkpoints/<suite>.json`` whose action updates the Data Docs. Nothing a
validation writes lands in the repository (a checkout may be read-only):
``great_expectations.yml`` puts the validation results and the Data Docs site under
``$TWINFLOW_HOME/gx/`` (on a local disk: paths.local_dir) and names no config variables
file (``data_docs/index.html``; the ops report links it). ``register_suite`` adds a suite
with its validation definition and checkpoint (``python -m operators_lib.ops.quality
SUITE.json``).

Facts that only a run knows (how many rows the output must have given the input) are validated
beside the checkpoint as runtime expectations, in the same summary. Severity (GX's
``severity`` of an expectation, default ``critical``): only a failed critical expectation fails
the gate; a failed ``warning`` or ``info`` one is reported under ``warnings`` and lets the
output through.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from operators_lib.errors import InputError
from operators_lib.paths import gx_root, local_dir

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SOURCE = "twinflow"  # the context's Spark data source
BATCH = "whole"  # each asset's batch definition: the whole output


def data_docs_index() -> Path:
    """Where the Data Docs site's index is built (great_expectations.yml)."""
    return local_dir() / "gx" / "data_docs" / "index.html"


def _context(root: Path, progress_bars: bool = False):
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    if not (root / "gx" / "great_expectations.yml").is_file():
        raise InputError(f"no Great Expectations context in {root} (gx/great_expectations.yml)")
    ctx = gx.get_context(mode="file", project_root_dir=root,
                         runtime_environment={"TWINFLOW_HOME": str(local_dir())})
    # GX ignores TQDM_DISABLE: it passes disable= to tqdm from this setting.
    ctx.variables.progress_bars = ProgressBarsConfig(globally=progress_bars)
    return ctx


def validate(df: DataFrame, suite_name: str, run_name: str, runtime: list[dict] | None = None,
             result_path: Path | None = None, progress_bars: bool = False) -> dict:
    """Run the suite's checkpoint over ``df`` (+ ``runtime`` expectations given as
    ``{"type": "expect_...", "kwargs": {...}}``), named ``run_name`` in the Data Docs (a
    scheduled run's interval); returns a summary with ``success`` and the Data Docs page of the
    validation, also written to ``result_path``. ``progress_bars``: GX's tqdm bars on stderr
    (off: they would flood task logs)."""
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.exceptions import DataContextError
    from great_expectations.expectations.registry import get_expectation_impl

    from operators_lib.io.output import write_json

    ctx = _context(gx_root(), progress_bars)
    try:
        checkpoint = ctx.checkpoints.get(suite_name)
    except DataContextError:
        raise InputError(f"no checkpoint {suite_name!r} in {gx_root() / 'gx'}: add the suite "
                         "with `python -m operators_lib.ops.quality SUITE.json`") from None
    # At the time it ran (GX would read a time out of an interval's name: a re-run would
    # replace the first run's page).
    run = checkpoint.run(batch_parameters={"dataframe": df}, run_id=RunIdentifier(
        run_name=run_name, run_time=datetime.now(UTC)))
    (identifier, result), = run.run_results.items()
    results = [result]
    if runtime:
        batch = ctx.data_sources.get(SOURCE).get_asset(suite_name) \
            .get_batch_definition(BATCH).get_batch(batch_parameters={"dataframe": df})
        results += [batch.validate(get_expectation_impl(rule["type"])(**rule["kwargs"]))
                    for rule in runtime]
    failed, warned = [], []
    for r in results:
        for item in r.results if hasattr(r, "results") else [r]:
            if not item.success:
                cfg = item.expectation_config
                severity = getattr(cfg.severity, "value", cfg.severity) or "critical"
                (failed if severity == "critical" else warned).append(
                    {"type": cfg.type, "severity": severity,
                     "kwargs": {k: v for k, v in cfg.kwargs.items() if k != "batch_id"},
                     "observed": (item.result or {}).get("observed_value")})
    pages = ctx.get_docs_sites_urls(resource_identifier=identifier)
    summary = {"suite": suite_name, "rows": df.count(), "success": not failed,
               "evaluated": sum(len(r.results) if hasattr(r, "results") else 1
                                for r in results), "failed": failed, "warnings": warned,
               "data_docs": pages[0]["site_url"] if pages else None}
    if result_path is not None:
        write_json(result_path, summary)  # whole or not at all: another process reads it
    return summary


def register_suite(suite: dict, root: Path | None = None) -> None:
    """Add (or replace) a suite in the context under ``root`` (default ``gx_root()``), with
    its data asset, validation definition and checkpoint."""
    import great_expectations as gx
    from great_expectations.checkpoint import UpdateDataDocsAction

    ctx = _context(root or gx_root())
    name = suite["name"]
    try:
        source = ctx.data_sources.get(SOURCE)
    except KeyError:
        # (the gate caches the rows itself and drops them after: GX's persist never does)
        source = ctx.data_sources.add_spark(SOURCE, persist=False)
    try:
        asset = source.get_asset(name)
    except LookupError:
        asset = source.add_dataframe_asset(name=name)
    try:
        batch = asset.get_batch_definition(BATCH)
    except (KeyError, LookupError):
        batch = asset.add_batch_definition_whole_dataframe(BATCH)
    stored = ctx.suites.add_or_update(gx.ExpectationSuite(**suite))
    definition = ctx.validation_definitions.add_or_update(
        gx.ValidationDefinition(name=name, data=batch, suite=stored))
    ctx.checkpoints.add_or_update(gx.Checkpoint(
        name=name, validation_definitions=[definition],
        actions=[UpdateDataDocsAction(name="update_data_docs")]))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        register_suite(json.loads(Path(path).read_text()))
        print(f"registered {path} in {gx_root() / 'gx'}")
