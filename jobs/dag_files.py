"""``twinflow dags install FOLDER``: an installed twinflow's DAGs in an Airflow DAGs folder.

It writes one DAG file, ``FOLDER/twinflow.py``, that imports the DAG modules shipped in the
package (``twinflow_dags``: the repository's ``dags/``). Airflow finds the DAGs in it (it keys
them by that file, on the DAG processor and on every worker), and they stay those of the
twinflow installed: an upgrade needs no new copy. The DAGs are built from the query configs in
``$TWINFLOW_QUERIES``, when the file is parsed.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

from operators_lib.errors import InputError

FILE = "twinflow.py"
MARK = "# Written by `twinflow dags install`"


def modules() -> list[str]:
    """The shipped DAG modules (``twinflow_dags`` has no ``__init__``: a namespace package)."""
    folders = find_spec("twinflow_dags").submodule_search_locations
    return sorted({f.stem for d in folders if Path(d).is_dir() for f in Path(d).glob(
        "twinflow_*.py")})


def install(folder: Path) -> Path:
    """Write (or rewrite) ``folder/twinflow.py``; a file of that name that this command did not
    write is left alone (an InputError)."""
    if not folder.is_dir():
        raise InputError(f"{folder}: no such DAGs folder")
    target = folder / FILE
    if target.exists() and MARK not in target.read_text():
        raise InputError(f"{target} exists and was not written by twinflow: move it away")
    target.write_text(
        '"""twinflow\'s Airflow DAGs, one set per query config in $TWINFLOW_QUERIES, as the '
        'installed\ntwinflow defines them (its package twinflow_dags)."""\n'
        f"{MARK}.\n"
        + "".join(f"from twinflow_dags.{m} import *  # noqa: F403\n" for m in modules()))
    return target
