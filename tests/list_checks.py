"""Write tests/CHECKS.txt: every collected test id, sorted, under a short header. Collecting
needs no Spark; regenerate after moving or renaming tests so the diff shows every check's fate.

    PYTHONPATH=. python tests/list_checks.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
HEADER = """\
# Every test id pytest collects (tests/list_checks.py writes this file; sorted).
# Corpus cases (tests/cases/<feature>/<case>) appear as parameters: each must be in some id.
"""


def collected() -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                          "no:xdist", str(TESTS)], capture_output=True, text=True,
                         cwd=TESTS.parent, check=True).stdout
    return sorted(line for line in out.splitlines() if "::" in line)


def uncovered(ids: list[str]) -> list[str]:
    """Corpus cases named in no test id."""
    cases = sorted(f"{p.parent.parent.name}/{p.parent.name}"
                   for p in (TESTS / "cases").glob("*/*/query.sql"))
    text = "\n".join(ids)
    return [c for c in cases if c not in text]


def render() -> str:
    """CHECKS.txt's text for the tests collected now."""
    ids = collected()
    missing = uncovered(ids)
    return (HEADER + f"# {len(ids)} tests; cases in no test id: {', '.join(missing) or 'none'}\n"
            + "\n".join(ids) + "\n")


def main() -> None:
    (TESTS / "CHECKS.txt").write_text(render())


if __name__ == "__main__":
    main()
