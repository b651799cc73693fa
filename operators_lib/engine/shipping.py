"""Ship twinflow's code to executors on other machines: one zip of the ``operators_lib``
package, named by a hash of its content, handed to Spark as a Python file.

Executors unpickle the stateful processors and pandas functions by reference
(``operators_lib.stream.*``), so they must import the very code the driver planned with. On
one machine they find it in the driver's environment; on a cluster they find it in this zip,
which Spark copies to every executor and puts on its workers' ``sys.path`` ahead of site-packages.
``twinflow run --master URL`` adds it to the session (spark.py), the DAGs pass it to
spark-submit as ``--py-files`` (jobs/dag_parts.py). Executors still need the third-party
packages the operators import (numpy, pandas, pyarrow: pyspark's own needs for pandas
functions) in the Python that ``PYSPARK_PYTHON`` names.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
# Only what executors import: Python sources (no caches, no tests).
_SUFFIXES = {".py", ".properties"}


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*")
                  if p.is_file() and p.suffix in _SUFFIXES and "__pycache__" not in p.parts)


def code_archive(directory: Path) -> Path:
    """``directory/operators_lib-<hash>.zip``, written once per version of the code (atomic:
    concurrent callers write the same bytes, the last rename wins)."""
    files = _sources()
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(PACKAGE.parent)).encode())
        digest.update(f.read_bytes())
    target = directory / f"operators_lib-{digest.hexdigest()[:16]}.zip"
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".operators_lib-", suffix=".zip")
    with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as z:
        for f in files:
            # A fixed timestamp: the same code gives the same bytes.
            info = zipfile.ZipInfo(str(f.relative_to(PACKAGE.parent)), (2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, f.read_bytes())
    os.replace(tmp, target)
    return target


def is_local(master: str) -> bool:
    """A master whose executors run in the driver's own process (``local``, ``local[n]``)."""
    return master.startswith("local")
