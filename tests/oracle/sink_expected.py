"""Regenerate a sink case's expected files from real Apache Flink: what Flink's filesystem sink
writes for the case's ``INSERT INTO`` (the oracle script cannot wait for an INSERT's job, so
this runs PyFlink of the same install directly).

    python tests/oracle/sink_expected.py tests/cases/sinks/csv_partitioned [...]   # or --all

A sink case: ``ddl.sql`` (its tables, the target's WITH 'path' relative: ``out``),
``query.sql`` (the INSERT INTO), ``files/`` (the inputs), ``case.json`` (``format``; ``mode``:
``streaming``, or ``batch`` for a result only batch writes). Flink runs it in that mode
(parallelism 1) in a copy of the case's folder; <case>/expected/sink.json holds, per partition
folder (``""``: the path itself), its files' lines in order (csv, json) or its rows as
pyarrow or fastavro read them (parquet, avro: {column: text}); an avro case's
<case>/expected/avro.json the schema and codec of Flink's files; SOURCE.txt the command.
Never derived from twinflow's output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.oracle.regen_expected import PYTHON, format_jars  # noqa: E402


def flink_writes(folder: Path, mode: str, jars: list[Path]) -> None:
    """(In Flink's Python) run the case in ``folder``: its DDL, then its INSERT, awaited."""
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode() if mode == "streaming"
                                  else EnvironmentSettings.in_batch_mode())
    env.get_config().set("parallelism.default", "1")
    env.get_config().set("table.local-time-zone", "UTC")
    if jars:
        env.get_config().set("pipeline.jars", ";".join(j.as_uri() for j in jars))
    for text in ((folder / "ddl.sql").read_text(), (folder / "query.sql").read_text()):
        for statement in _statements(text):
            result = env.execute_sql(statement)
            if statement.lstrip().upper().startswith("INSERT"):
                result.wait()


def _statements(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [s for s in "\n".join(lines).split(";") if s.strip()]


def visible(out: Path) -> list[Path]:
    """The files under ``out`` a reader reads (none hidden: '.' or '_'), in name order."""
    return [f for f in sorted(out.rglob("*")) if f.is_file() and not any(
        p.startswith((".", "_")) for p in f.relative_to(out).parts)]


def written(out: Path, fmt: str) -> dict[str, list]:
    """Per partition folder under ``out``, its visible files' lines or rows, in name order."""
    found: dict[str, list] = {}
    for f in visible(out):
        rel = f.relative_to(out)
        folder = rel.parent.as_posix() if rel.parent != Path(".") else ""
        found.setdefault(folder, []).extend(rows_of(f, fmt))
    return found


def avro_files(out: Path) -> list[dict]:
    """Each visible Avro file's schema and codec (the header a reader resolves against)."""
    import fastavro

    found = []
    for f in visible(out):
        with open(f, "rb") as fh:
            reader = fastavro.reader(fh)
            found.append({"schema": reader.writer_schema, "codec": reader.codec})
    return found


def rows_of(f: Path, fmt: str) -> list:
    if fmt == "avro":
        import fastavro

        with open(f, "rb") as fh:
            return [{k: None if v is None else str(v) for k, v in row.items()}
                    for row in fastavro.reader(fh)]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return [{k: None if v is None else str(v) for k, v in row.items()}
                for row in pq.read_table(f, partitioning=None).to_pylist()]
    return f.read_text(encoding="utf-8").splitlines(keepends=False)


def regen(case: Path) -> None:
    meta = json.loads((case / "case.json").read_text())
    fmt, mode = meta["format"], meta.get("mode", "streaming")
    jars = format_jars(case)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / case.name
        shutil.copytree(case, work, ignore=shutil.ignore_patterns("expected"))
        proc = subprocess.run([PYTHON, __file__, "--flink", str(work), mode,
                               *[str(j) for j in jars]], capture_output=True, text=True,
                              timeout=600, cwd=work)
        if proc.returncode:
            sys.exit(f"{case}: Flink failed:\n{proc.stderr[-3000:]}")
        found = written(work / "out", fmt)
        headers = avro_files(work / "out") if fmt == "avro" else []
    exp = case / "expected"
    exp.mkdir(exist_ok=True)
    if headers:  # one schema and codec for all of Flink's files
        (exp / "avro.json").write_text(json.dumps(headers[0], indent=1) + "\n")
    (exp / "sink.json").write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    where = f"tests/cases/{case.parent.name}/{case.name}"
    (exp / "SOURCE.txt").write_text(
        f"Produced by real Apache Flink 2.3.0 (PyFlink MiniCluster, {mode} mode, "
        f"parallelism 1) with:\npython tests/oracle/sink_expected.py {where}\n"
        "(its ddl.sql, then its query.sql's INSERT INTO, awaited; the files Flink wrote "
        "under out/, per partition folder)\n")
    print(f"{case}: {sum(map(len, found.values()))} rows in {len(found)} folder(s)")


def main() -> None:
    if sys.argv[1:2] == ["--flink"]:
        flink_writes(Path(sys.argv[2]), sys.argv[3], [Path(j) for j in sys.argv[4:]])
        return
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--all", action="store_true", help="every case under tests/cases/sinks/")
    args = ap.parse_args()
    cases = sorted(p.parent for p in (REPO / "tests" / "cases" / "sinks").glob("*/query.sql")) \
        if args.all else args.cases
    for c in cases:
        regen(c.resolve())


if __name__ == "__main__":
    main()
