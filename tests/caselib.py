"""The case corpus (tests/cases/<feature>/<case>/) and comparisons with Flink's output.

A case holds ddl.sql, query.sql, one <table>.csv per table and expected/ (written by
tests/oracle/regen_expected.py from real Flink): changelog.csv, stream_final.csv, batch_final.csv.
Values are compared by type: floating point at 12 significant digits (Flink retracts from running
sums, Spark recomputes frames: the last bits differ), NULL as Flink's 'NULL' or an empty field.
Our side of a comparison is a ``twinflow run``'s output directory or a plan-level run's results
(tests/planlevel.py), read alike (``output_rows``).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from upath import UPath

from operators_lib.io.storage import Place
from operators_lib.runs.lifecycle import run
from operators_lib.runs.spec import Outcome, RunSpec, Steps
from operators_lib.stream.runner import SPARK
from tests.changelogs import canonical_nan
from tests.harness import HarnessRuntime

if TYPE_CHECKING:
    from tests.planlevel import PlanRun

CASES = Path(__file__).parent / "cases"


@dataclass(frozen=True)
class Case:
    dir: Path

    @property
    def id(self) -> str:
        return f"{self.dir.parent.name}/{self.dir.name}"

    @property
    def sql(self) -> list[Path]:
        return [self.dir / "ddl.sql", self.dir / "query.sql"]

    @property
    def data(self) -> dict[str, Path]:
        return {p.stem: p for p in sorted(self.dir.glob("*.csv"))}

    @property
    def meta(self) -> dict:
        path = self.dir / "case.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def expected(self, name: str) -> list[list[str]]:
        return read_csv(self.dir / "expected" / name)

    def run(self, spark, out: Path, mode: str = "both", rows_per_batch: int | None = None,
            stop_after: int | None = None, topn_split: int = 1, harness: bool = False
            ) -> Outcome:
        """``harness``: stream mode on the operator harness (tests/harness.py), not Spark's
        Structured Streaming."""
        return run(RunSpec.bounded_run(self.sql, self.data, mode, out, rows_per_batch,
                                       stop_after, topn_split), spark, Steps.RUN,
                   runtime=HarnessRuntime() if harness else SPARK)


def all_cases(feature: str | None = None) -> list[Case]:
    pattern = f"{feature}/*/query.sql" if feature else "*/*/query.sql"
    return [Case(p.parent) for p in sorted(CASES.glob(pattern))]


def read_csv(path: Place) -> list[list[str]]:
    with path.open(newline="") as fh:
        return [row for row in csv.reader(fh) if row]


def output_rows(out: Place | PlanRun, name: str) -> list[list[str]]:
    """An output file's header and rows (``out``: a run's --out, local or on a store)."""
    return read_csv(out / name) if isinstance(out, Path | UPath) else out.rows(name)


def column_types(out: Place | PlanRun) -> dict[str, str]:
    if not isinstance(out, Path | UPath):
        return out.types
    report = json.loads((out / "report.json").read_text())
    return {c["name"]: c["type"] for c in report["columns"]}


def _value(text: str, type_name: str):
    if text in ("", "NULL"):
        return None
    t = type_name.split("(")[0]
    if t in ("DOUBLE", "FLOAT"):  # NaN, Infinity as Flink prints them
        return canonical_nan(float(f"{float(text):.12g}"))
    if t == "DECIMAL":
        return Decimal(text)
    if t in ("INT", "BIGINT", "SMALLINT", "TINYINT"):
        return int(text)
    return text


def parquet_result(directory: Place) -> tuple[list[str], list[tuple]]:
    """A published ``<name>.parquet/`` directory's columns and rows (Python values: Decimal,
    datetime, ...), its files read in order (a local path or a place on a store)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from operators_lib.io import storage

    tables = []
    for name in storage.files(directory):
        if name.endswith(".parquet"):
            with storage.open_input(directory / name) as fh:
                tables.append(pq.read_table(fh))
    table = pa.concat_tables(tables)
    return table.column_names, [tuple(r.values()) for r in table.to_pylist()]


def typed(rows, types: list[str]) -> list[tuple]:
    """Rows of text typed by their columns' types (``_value``)."""
    return [tuple(_value(v, t) for v, t in zip(r, types)) for r in rows]


def normalize(rows: list[list[str]], types: dict[str, str]) -> tuple[list[str], list[tuple]]:
    """(header, typed rows); an ``op`` column is kept as text."""
    header, body = rows[0], rows[1:]
    return header, typed(body, [types.get(h, "STRING") for h in header])


def typed_pair(case: Case, out: Path | PlanRun, ours: str, flink: str
               ) -> tuple[list[tuple], list[tuple]]:
    """Our output file and Flink's expected one, typed by our result's column types."""
    types = column_types(out)
    h1, a = normalize(output_rows(out, ours), types)
    h2, b = normalize(case.expected(flink), types)
    assert h1 == h2, f"{case.id}: columns {h1} != Flink's {h2}"
    return a, b


def assert_final(case: Case, out: Path | PlanRun, ours: str, flink: str) -> None:
    a, b = typed_pair(case, out, ours, flink)
    assert as_multiset(a) == as_multiset(b), f"{case.id}: {ours} differs from Flink's {flink}"


def assert_changelog(case: Case, out: Path | PlanRun) -> None:
    """Our changelog is Flink's, row by row (up to the order of ties, ``canonical_changelog``
    with the case's ``changelog_ties``)."""
    a, b = typed_pair(case, out, "changelog.csv", "changelog.csv")
    header = output_rows(out, "changelog.csv")[0]
    ties = case.meta.get("changelog_ties")
    assert canonical_changelog(header, a, ties) == canonical_changelog(header, b, ties), \
        f"{case.id}: changelog.csv differs from Flink's changelog.csv"


def assert_resumes(case: Case, spark, out: Path, rows_per_batch: int, stop_after: int) -> None:
    """A stream stopped after ``stop_after`` micro-batches and resumed from its checkpoint
    completes, with parity (the case's expected verdict) and Flink's final result."""
    first = case.run(spark, out, "stream", rows_per_batch=rows_per_batch, stop_after=stop_after)
    assert first.exit_code == 0
    assert not first.report.stream.complete
    second = case.run(spark, out, "both", rows_per_batch=rows_per_batch)
    assert second.exit_code == 0, second.message
    assert second.report.stream.complete
    assert second.report.parity.verdict == case.meta.get("parity", "equal")
    assert_final(case, out, "stream.csv", "stream_final.csv")
    # Each invocation is one run of the state's records (lifecycle.record_run), the resumed
    # one from the micro-batch after the stopped one's last.
    runs = [json.loads(p.read_text()) for p in sorted((out / "_state" / "runs").glob("*.json"))]
    assert [(r["report"]["complete"], r["first_batch"]) for r in runs] == [
        (False, 0), (True, runs[0]["last_batch"] + 1)]
    assert runs[0]["last_batch"] >= stop_after - 1  # (and a batch that only moves the watermark)
    assert runs[1]["report"]["micro_batches_this_run"] == runs[1]["last_batch"] - runs[0][
        "last_batch"]


def as_multiset(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r))


def canonical_changelog(header: list[str], rows: list[tuple], ties: dict | None) -> list[tuple]:
    """Flink's timer queue fires equal-time timers of *different* partitions in heap order, an
    implementation detail. Within each run of rows with equal ``ties["time"]``, order rows by
    their partition key (``ties["key"]`` columns, case-folded), keeping arrival order inside a
    partition; every other difference in order still counts."""
    if not ties:
        return rows
    t = header.index(ties["time"])
    keys = [header.index(k) for k in ties["key"]]
    out, run = [], []
    for row in rows + [None]:
        if run and (row is None or row[t] != run[0][t]):
            out.extend(sorted(run, key=lambda r: tuple(str(r[k]).upper() for k in keys)))
            run = []
        if row is not None:
            run.append(row)
    return out
