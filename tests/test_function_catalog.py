"""docs/FUNCTIONS.md is the table tests/oracle/function_catalog.py generates: every entry of
Flink 2.3's built-in functions page, planned by twinflow, supported (with its oracle case) or
refused (with the reason). A change to the catalog or the planner that changes the table must
regenerate it; a supported entry without a case is a gap."""

from __future__ import annotations

from tests.oracle import function_catalog


def test_the_function_table_is_current_and_every_supported_entry_has_its_case(spark):
    table = function_catalog.table(spark)
    assert table == function_catalog.DOC.read_text(), (
        "docs/FUNCTIONS.md is out of date: run .venv/bin/python tests/oracle/function_catalog.py")
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and
            " supported " in line]
    assert rows and not [r for r in rows if r[3].startswith("`None`")], "supported, no case"
