"""The config of a scheduled query (``dags/queries/<name>.json``), typed: one model that the DAG
files (at Airflow's parse time, so nothing heavy is imported here), the spark-submit jobs and
the gates read. Reading validates the file: an unknown or misspelt key, a wrong type or a value
out of range is an InputError (exit 2) naming the file and the key. The defaults are the
model's; docs/QUERY_CONFIG.md is generated from it (config_doc.py).

The maintenance DAGs keep what they choose for a query beside the state, not in the DAG folder
(``$TWINFLOW_HOME/config/<query>.json``, ``Chosen``): ``QueryConfig.load`` lays it over the
file, so the hotspot DAG's split wins over the file's ``hotspot.split``."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from operators_lib.engine.locations import local_path
from operators_lib.errors import InputError
from operators_lib.io import uris
from operators_lib.paths import chosen_settings


class Section(BaseModel):
    """A part of a config file: every key known (a misspelt one is an error, not a default)."""

    model_config = ConfigDict(extra="forbid")


class Hotspot(Section):
    """TopN hotspot management (operators_lib/runs/hotspot.py): with this section the query
    also gets the DAG ``twinflow_hotspot_<query>``."""

    split: int = Field(1, ge=1, description="TopN split factor S (1: single level); the hotspot "
                       "DAG's choice in $TWINFLOW_HOME/config/<query>.json wins over it")
    max_split: int = Field(128, ge=1, description="the largest S the hotspot rule chooses")
    parallelism: int = Field(2, ge=1, description="tasks that run the TopN at once (P of the "
                             "rule)")
    window_rows: int = Field(1_000_000, ge=1, description="skew is measured over the newest "
                             "staged input of at most this many rows per table")
    schedule: str | None = Field("@daily", description="the hotspot DAG's schedule (null: "
                                 "triggered by hand)")


class Checkpoints(Section):
    """Checkpoint rotation (the DAG ``twinflow_checkpoints_<query>``)."""

    schedule: str | None = Field(None, description="the rotation's schedule (null: after each "
                                 "publish, on the query's Asset)")
    keep: int = Field(3, ge=1, description="verified rotation snapshots kept (those taken by "
                      "hand stay)")


class QueryConfig(Section):
    """A scheduled query: its SQL, where its input lands, its quality suite and its DAGs'
    settings. Paths are relative to the config file (or absolute), and local."""

    name: str = Field(description="the query's name: its DAG ids, state and published "
                      "directories")
    sql: list[Path] = Field(description="SQL files run in order (DDL, then the query)")
    inputs: dict[str, Path | str] = Field(
        {}, description="table -> directory (or s3a://, hdfs:// URI) that its new files land "
        "in (CSV with a header row; or .json, .parquet, .avro); a table not listed is read "
        "where its WITH clause says")
    skip_older_folders: bool = Field(
        False, description="list each input only from the newest consumed file's folders on, "
        "level by level (dated layouts such as dt=YYYY-MM-DD/hr=HH/, numbers zero-padded: a "
        "folder that sorts before the newest consumed file's receives no new files); false: "
        "list everything")
    expectations: str = Field(description="the Great Expectations suite that gates publishing "
                              "(expectations/gx/expectations/<name>.json)")
    publish_format: Literal["parquet", "csv"] = Field(
        "parquet", description="the format of a run's results (stream, changes, batch): "
        "parquet, a directory of Parquet files with the columns' types (<name>.parquet/); csv, "
        "one CSV file each in Flink's rendering (<name>.csv)")
    rows_per_batch: int = Field(1000, ge=1, description="input rows per micro-batch")
    schedule: str | None = Field(None, description="the query DAG's schedule (null: triggered "
                                 "by hand)")
    max_rejected_rows: int = Field(0, ge=0, description="malformed input rows a run may set "
                                   "aside (rejected.csv) and still go on")
    one_row_per_input_row: bool = Field(False, description="the gate expects as many output "
                                        "rows as parity's emitted rows (OVER queries)")
    retries: int = Field(1, ge=0, description="Airflow retries of each task")
    retry_delay_minutes: float = Field(1, ge=0, description="how long a failed task waits "
                                       "before its retry")
    spark_conn_id: str = Field("spark_default", description="the Airflow connection of the "
                               "spark-submit steps")
    store_conn_id: str | None = Field(None, description="an Airflow connection whose login and "
                                      "password are the S3 access and secret key of the "
                                      "query's stores (its steps get them as AWS_ACCESS_KEY_ID "
                                      "/ AWS_SECRET_ACCESS_KEY); none: the Hadoop "
                                      "configuration's and the AWS SDK's own")
    step_timeout_minutes: float = Field(120, gt=0, description="each spark-submit step's "
                                        "execution_timeout: a hung step is killed (and "
                                        "retried)")
    spark_pool: str = Field("default_pool", description="the Airflow pool of the spark-submit "
                            "steps (one of a few slots bounds how many run at once: "
                            "airflow pools set twinflow_spark 2 'twinflow')")
    on_failure: str | None = Field(None, description="called when a task of the query's DAGs "
                                   "fails (a step, parity, the gate): module:attribute of a "
                                   "callable or an Airflow Notifier, e.g. an SmtpNotifier")
    deadline_minutes: float | None = Field(None, gt=0, description="Airflow's deadline of each "
                                           "run of the query DAG: minutes after it was queued; "
                                           "a run not done by then calls on_deadline")
    on_deadline: str | None = Field(None, description="module:attribute of a callable, called "
                                    "with the run's context on an executor when a query run "
                                    "misses its deadline (default: on_failure)")
    spark_conf: dict[str, str] = Field({}, description="Spark settings of the spark-submit "
                                       "steps, after twinflow's: they win")
    audit_schedule: str | None = Field("@daily", description="the audit DAG's schedule")
    compact_schedule: str | None = Field("@daily", description="the state TTL compaction DAG's "
                                         "schedule")
    checkpoints: Checkpoints = Field(default_factory=Checkpoints,
                                     description="checkpoint rotation")
    hotspot: Hotspot | None = Field(None, description="TopN hotspot management (none: no "
                                    "hotspot DAG, split 1)")

    @property
    def topn_split(self) -> int:
        """The TopN split factor the config asks for (``hotspot.split``; 1: single level)."""
        return self.hotspot.split if self.hotspot else 1

    @field_validator("sql")
    @classmethod
    def _sql_files(cls, paths: list[Path], info: ValidationInfo) -> list[Path]:
        if not info.context:  # built in code: the paths are as given
            return paths
        return [info.context["base"] / local_path(p, f"{info.context['file']}: sql file")
                for p in paths]

    @field_validator("inputs")
    @classmethod
    def _input_dirs(cls, dirs: dict[str, Path | str], info: ValidationInfo
                    ) -> dict[str, Path | str]:
        """A local path (relative to the config file) as a Path, a URI as a string."""
        if not info.context:
            return dirs
        found = {t: uris.location(p, f"{info.context['file']}: input of {t}")
                 for t, p in dirs.items()}
        return {t: info.context["base"] / p if isinstance(p, Path) else p
                for t, p in found.items()}

    @classmethod
    def read(cls, path: Path) -> QueryConfig:
        """The config file as written (the DAG files: what the maintenance DAGs chose does not
        change which DAGs a query has)."""
        return _validated(cls, Path(path), {"file": path, "base": Path(path).parent})

    @classmethod
    def load(cls, path: Path) -> QueryConfig:
        """What a run uses: the file, with what the maintenance DAGs chose for the query laid
        over it (the hotspot split)."""
        return cls.read(path).with_choices()

    def with_choices(self) -> QueryConfig:
        """This config (as read) with what the maintenance DAGs chose for the query laid over
        it (kept under ``$TWINFLOW_HOME``)."""
        chosen = chosen_settings(self.name)
        if not chosen.exists() or not (hotspot := _validated(Chosen, chosen).hotspot):
            return self
        return self.model_copy(update={"hotspot": (self.hotspot or Hotspot()).model_copy(
            update={"split": hotspot.split})})


class LastChange(Section):
    """The hotspot DAG's latest change of the split (its audit record, in short)."""

    at: str
    old_split: int
    new_split: int
    reason: str


class ChosenHotspot(Section):
    """The split the hotspot DAG chose, with its latest change."""

    split: int = Field(ge=1)
    last_change: LastChange | None = None


class Chosen(Section):
    """What the maintenance DAGs chose for a query (``$TWINFLOW_HOME/config/<query>.json``)."""

    hotspot: ChosenHotspot | None = None


M = TypeVar("M", bound=BaseModel)


def _validated(model: type[M], path: Path, context: dict | None = None) -> M:
    """``path`` parsed as JSON into ``model`` (strict types: ``"5"`` is no number), or one
    InputError naming the file and each key at fault."""
    try:
        return model.model_validate_json(path.read_bytes(), strict=True, context=context)
    except ValidationError as e:
        raise InputError(f"{path}: " + "; ".join(_problem(model, err) for err in e.errors())
                         ) from None


def _problem(model: type[BaseModel], err: dict) -> str:
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    if err["type"] == "extra_forbidden":
        known = _keys(model, err["loc"][:-1])
        close = difflib.get_close_matches(str(err["loc"][-1]), known, n=1)
        return f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
    if err["type"] == "missing":
        return f"missing key {key!r}"
    message = err["msg"][:1].lower() + err["msg"][1:]
    if err["type"] == "json_invalid" or not key:
        return message
    return f"{key}: {message}, got {err['input']!r}"


def _keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys the section of ``model`` at ``loc`` knows (for a misspelt key's suggestion)."""
    for part in loc:
        field = model.model_fields.get(str(part))
        sections = [t for t in getattr(field.annotation, "__args__", (field.annotation,))
                    if isinstance(t, type) and issubclass(t, BaseModel)] if field else []
        if not sections:
            return []
        model = sections[0]
    return list(model.model_fields)
