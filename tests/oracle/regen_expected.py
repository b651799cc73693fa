"""Regenerate a case's expected results from real Apache Flink (../shared/flink-oracle).

    python tests/oracle/regen_expected.py tests/cases/over/seed_rows_max [...]   # or --all

Writes into <case>/expected/:
  changelog.csv     Flink streaming changelog, a watermark after every row (--watermarks per-row)
  stream_final.csv  the materialized streaming result of that run
  batch_final.csv   Flink batch mode; where Flink 2.3's batch mode fails on the query (e.g. OVER
                    RANGE on a timestamp), the streaming result with --watermarks end-only
                    (nothing late), which is what batch semantics mean
  SOURCE.txt        the exact commands that produced the files
Where Flink 2.3's streaming mode rejects the query as unsupported (RANK/DENSE_RANK TopN), both
finals are its batch result and there is no changelog.csv.
Expected results are never derived from twinflow's own output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ORACLE = Path(os.environ.get("FLINK_ORACLE", REPO.parent / "shared" / "flink-oracle" /
                             "flink_oracle.py"))
PYTHON = os.environ.get("FLINK_PYTHON", str(Path.home() / ".cache" / "flink-venv" / "bin" /
                                            "python"))


FLINK_VERSION = "2.3.0"
HADOOP_VERSION = "3.5.0"  # pyspark's
MAVEN = "https://repo1.maven.org/maven2"
JARS = Path.home() / ".cache" / "twinflow" / "flink-jars"


def oracle(case: Path, *args: str) -> tuple[list[str], str]:
    """Flink's answer for the case. A case.json ``flink_query`` names the file Flink runs in
    place of query.sql, for a form Flink's SQL cannot state but its Table API can: the
    temporal table function ``LATERAL TABLE (Rates(o.ts))``, which Flink defines as the
    temporal join ``Rates FOR SYSTEM_TIME AS OF o.ts`` over the versioned table."""
    meta = case / "case.json"
    query = json.loads(meta.read_text()).get("flink_query") if meta.exists() else None
    where = f"tests/cases/{case.parent.name}/{case.name}"
    if query:
        tables = sorted(case.glob("*.csv"))
        files = ["--ddl", str(case / "ddl.sql"), "--query", str(case / query),
                 *[x for t in tables for x in ("--data", f"{t.stem}={t}")]]
        shown = ["--ddl", f"{where}/ddl.sql", "--query", f"{where}/{query}",
                 *[x for t in tables for x in ("--data", f"{t.stem}={where}/{t.name}")]]
    else:
        files, shown = ["--case", str(case)], ["--case", where]
    env = dict(os.environ)
    modules = sorted(case.glob("*.py"))
    if modules:  # Python UDFs: PyFlink imports the module in the client and in its workers
        env["PYTHONPATH"] = str(case)
        args = ("--conf", f"python.files={','.join(str(m) for m in modules)}",
                "--conf", f"python.executable={PYTHON}", *args)
        shown = [f"PYTHONPATH={where}", *shown]
    jars = format_jars(case)
    if jars:  # Flink's parquet / avro formats are jars of their own (Maven Central)
        args = ("--conf", f"pipeline.jars={';'.join(j.as_uri() for j in jars)}", *args)
        shown += ["--conf", "pipeline.jars=" + ";".join(j.name for j in jars)]
    # (in the case's folder: a WITH clause's relative 'path' is read from there)
    proc = subprocess.run([PYTHON, str(ORACLE), *files, *args], capture_output=True, text=True,
                          timeout=600, env=env, cwd=case)
    shown_args = [a.replace(str(case), where).replace(PYTHON, "$FLINK_PYTHON") for a in args]
    return proc.stdout.splitlines(), " ".join(["flink_oracle.py", *shown, *shown_args])


def format_jars(case: Path) -> list[Path]:
    """The jars Flink's format of the case's tables needs (its DDL's 'format' = 'parquet' or
    'avro'; Parquet's reader needs Hadoop's classes too), fetched once from Maven Central into
    ~/.cache/twinflow/flink-jars."""
    ddl = (case / "ddl.sql").read_text()
    wanted = []
    for fmt in ("parquet", "avro"):
        if re.search(rf"'format'\s*=\s*'{fmt}'", ddl):
            wanted.append(f"org/apache/flink/flink-sql-{fmt}/{FLINK_VERSION}")
    if any("parquet" in w for w in wanted):
        wanted += [f"org/apache/hadoop/hadoop-client-{part}/{HADOOP_VERSION}"
                   for part in ("api", "runtime")]
    jars = []
    for coordinate in wanted:
        group_path, version = coordinate.rsplit("/", 1)
        jar = JARS / f"{group_path.rsplit('/', 1)[1]}-{version}.jar"
        if not jar.exists():
            JARS.mkdir(parents=True, exist_ok=True)
            urllib.request.urlretrieve(f"{MAVEN}/{coordinate}/{jar.name}", jar)
        jars.append(jar)
    return jars


def blocks(lines: list[str]) -> dict[tuple[str, str], list[str]]:
    """{(mode, section): lines} with section 'changelog', 'final' or 'error'."""
    out: dict[tuple[str, str], list[str]] = {}
    mode = section = None
    for line in lines:
        if line.startswith("### query="):
            mode = line.split("mode=")[1].strip()
        elif line.startswith("-- changelog"):
            section = "changelog"
            out[(mode, section)] = []
        elif line.startswith("-- final"):
            section = "final"
            out[(mode, section)] = []
        elif line.startswith("-- error"):
            out[(mode, "error")] = [line]
            section = None
        elif line.startswith("-- "):
            section = None
        elif section:
            out[(mode, section)].append(line)
    return out


def regen(case: Path) -> None:
    exp = case / "expected"
    exp.mkdir(exist_ok=True)
    lines, cmd = oracle(case, "--mode", "both")
    b = blocks(lines)
    batch = b.get(("batch", "final"))
    if ("streaming", "changelog") not in b:
        error = b.get(("streaming", "error"), ["?"])[0]
        if batch is None or "not supported" not in error:
            sys.exit(f"{case}: Flink streaming failed:\n" + "\n".join(lines))
        # Flink 2.3's streaming mode rejects the query (e.g. RANK() TopN); twinflow runs it,
        # and its stream result must equal Flink's batch result.
        (exp / "changelog.csv").unlink(missing_ok=True)
        (exp / "stream_final.csv").write_text("\n".join(batch) + "\n")
        (exp / "batch_final.csv").write_text("\n".join(batch) + "\n")
        (exp / "SOURCE.txt").write_text(
            "Produced by real Apache Flink 2.3.0 (PyFlink MiniCluster, parallelism 1) with:\n"
            f"batch_final.csv, stream_final.csv: {cmd}  (batch mode; Flink's streaming mode "
            f"rejects the query: {error[:200]})\n")
        print(f"{case}: streaming unsupported by Flink; {len(batch) - 1} batch rows")
        return
    sources = [f"changelog.csv, stream_final.csv: {cmd}"]
    (exp / "changelog.csv").write_text("\n".join(b[("streaming", "changelog")]) + "\n")
    (exp / "stream_final.csv").write_text("\n".join(b[("streaming", "final")]) + "\n")
    if batch is None:
        lines2, cmd2 = oracle(case, "--mode", "streaming", "--watermarks", "end-only")
        batch = blocks(lines2)[("streaming", "final")]
        reason = b.get(("batch", "error"), ["?"])[0]
        sources.append(f"batch_final.csv: {cmd2}  (Flink batch mode failed: {reason[:200]})")
    else:
        sources.append(f"batch_final.csv: {cmd}")
    (exp / "batch_final.csv").write_text("\n".join(batch) + "\n")
    (exp / "SOURCE.txt").write_text("Produced by real Apache Flink 2.3.0 (PyFlink MiniCluster, "
                                    "parallelism 1) with:\n" + "\n".join(sources) + "\n")
    print(f"{case}: {len(b[('streaming', 'changelog')]) - 1} changelog rows, "
          f"{len(batch) - 1} batch rows")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", type=Path)
    ap.add_argument("--all", action="store_true", help="every case under tests/cases/")
    args = ap.parse_args()
    cases = sorted(p.parent for p in (REPO / "tests" / "cases").glob("*/*/query.sql")
                   if p.parent.parent.name != "sinks") \
        if args.all else args.cases
    for c in cases:
        regen(c.resolve())


if __name__ == "__main__":
    main()
