"""Finding a scheduled run's new files under a table's input holding many consumed ones:
the whole listing against ``skip_older_folders`` (runs/sources.py, io/remote.walk), on the
loopback S3 server (tests/object_store.py) and on a local directory.

    .venv/bin/python benchmarks/listing_bench.py [--files 10000] [--days 100]

Uploads ``--files`` small files in a dated layout (``dt=DAY/hr=HH/part-N.csv``, ``--days``
days, 24 hours each), then times the listing a run does when all but the newest hour were
consumed: every file (the default) and from the newest consumed file's folders on. Prints
JSON: seconds and the files each listing returned.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _names(files: int, days: int) -> list[str]:
    per_hour = max(1, files // (days * 24))
    return [f"dt=2026-{1 + d // 28:02d}-{1 + d % 28:02d}/hr={h:02d}/part-{i:04d}.csv"
            for d in range(days) for h in range(24) for i in range(per_hour)][:files]


def _time(source, after: str | None, store) -> tuple[float, int]:
    started = time.perf_counter()
    found = source.listing(required=True, store=store, after=after)
    return round(time.perf_counter() - started, 3), len(found)


def main() -> None:
    from operators_lib.catalog import TableDef
    from operators_lib.io.formats import Format
    from operators_lib.runs.sources import Source
    from tests.object_store import S3Server

    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=100)
    args = parser.parse_args()
    names = _names(args.files, args.days)
    newest_consumed = [n for n in names if not n.startswith(names[-1].rsplit("/", 1)[0])][-1]
    table = TableDef("t", ())
    results = {"files": len(names), "days": args.days, "newest_consumed": newest_consumed}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_text("1\n")
        local = Source(table, Path(tmp), Format("csv"), False)
        results["local"] = {"every_file": _time(local, None, None),
                            "skip_older_folders": _time(local, newest_consumed, None)}
    with S3Server() as s3:
        s3.bucket("data")
        store = s3.store()
        fs = store.filesystem()

        def put(name: str) -> None:
            with fs.open_output_stream(f"data/t/{name}") as out:
                out.write(b"1\n")

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(put, names))
        remote = Source(table, "s3a://data/t/", Format("csv"), False)
        results["s3_loopback"] = {"every_file": _time(remote, None, store),
                                  "skip_older_folders": _time(remote, newest_consumed, store)}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
