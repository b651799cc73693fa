"""Great Expectations gates on twinflow outputs.

A query's suite lives in ``expectations/<suite>.json`` in GX's own suite format (static rules:
key columns not NULL, aggregate bounds, ...). It is loaded into an ephemeral GX context, so a
validation never rewrites files in the repository. Facts that only a run knows (how many rows
the output must have given the input, the late and the still-pending rows) are added to that
run's validation as runtime expectations. One validation per output (FACTS: a GX run is expensive).

Severity (GX's ``severity`` of an expectation, default ``critical``): only a failed critical
expectation fails the gate; a failed ``warning`` or ``info`` one is reported under
``warnings`` and lets the output through.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from operators_lib.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def gx_root() -> Path:
    return Path(os.environ.get("TWINFLOW_GX_ROOT", REPO / "expectations"))


def validate_csv(csv_path: Path, suite_name: str, runtime: list[dict] | None = None,
                 result_path: Path | None = None, progress_bars: bool = False) -> dict:
    """Validate ``csv_path`` against the suite (+ ``runtime`` expectations given as
    ``{"type": "expect_...", "kwargs": {...}}``); returns a summary with ``success``.
    ``progress_bars``: GX's tqdm bars on stderr (off: they would flood task logs)."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.expectations.registry import get_expectation_impl

    path = gx_root() / f"{suite_name}.json"
    if not path.exists():
        raise InputError(f"expectation suite not found: {path}")
    ctx = gx.get_context(mode="ephemeral")
    # GX ignores TQDM_DISABLE: it passes disable= to tqdm from this setting.
    ctx.variables.progress_bars = ProgressBarsConfig(globally=progress_bars)
    suite = ctx.suites.add(gx.ExpectationSuite(**json.loads(path.read_text())))
    df = pd.read_csv(csv_path, keep_default_na=False, na_values=[""])
    source = ctx.data_sources.add_or_update_pandas("twinflow")
    try:
        asset = source.get_asset(suite_name)
    except LookupError:
        asset = source.add_dataframe_asset(name=suite_name)
    try:
        batch_def = asset.get_batch_definition("whole")
    except (KeyError, LookupError):
        batch_def = asset.add_batch_definition_whole_dataframe("whole")
    batch = batch_def.get_batch(batch_parameters={"dataframe": df})
    results = [batch.validate(suite)]
    for rule in runtime or []:
        expectation = get_expectation_impl(rule["type"])(**rule["kwargs"])
        results.append(batch.validate(expectation))
    failed, warned = [], []
    for r in results:
        items = r.results if hasattr(r, "results") else [r]
        for item in items:
            if not item.success:
                cfg = item.expectation_config
                severity = getattr(cfg.severity, "value", cfg.severity) or "critical"
                (failed if severity == "critical" else warned).append(
                    {"type": cfg.type, "severity": severity,
                     "kwargs": {k: v for k, v in cfg.kwargs.items() if k != "batch_id"},
                     "observed": (item.result or {}).get("observed_value")})
    summary = {"suite": suite_name, "rows": len(df), "success": not failed,
               "evaluated": sum(len(r.results) if hasattr(r, "results") else 1
                                for r in results), "failed": failed, "warnings": warned}
    if result_path is not None:
        result_path.write_text(json.dumps(summary, indent=2, default=str))
    return summary
