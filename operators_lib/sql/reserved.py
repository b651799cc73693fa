"""Flink's reserved words (flink_reserved_words.txt, read from Flink 2.3's parser): Flink refuses
a statement that uses one as an unquoted identifier (``SELECT t.value``, ``AS start``,
``CREATE TABLE t (value INT)``), so twinflow does too, naming it (exit 2), rather than run a
query Flink cannot. Quoted (```value```) they are plain names."""

from __future__ import annotations

from pathlib import Path

RESERVED = frozenset(
    line.strip() for line in (Path(__file__).with_name("flink_reserved_words.txt")
                              .read_text().splitlines())
    if line.strip() and not line.startswith("#"))


def reserved_message(name: str) -> str | None:
    """Why the unquoted identifier ``name`` is refused, or None."""
    if name.upper() not in RESERVED:
        return None
    return (f"{name} is a reserved word in Flink SQL: quote it as `{name}` (Flink's parser "
            "refuses it unquoted)")
