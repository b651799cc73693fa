"""Where a CSV file may be cut into pieces that parse apart, found without reading it whole.

A file is read as byte ranges of a fixed size, each by one task (ingest.py). ``scan_range``
reports what a range holds; ``plan_pieces`` turns a file's scans into pieces that start after
a newline (the first at or after the range's start), each with its first line's number. Only a
file without quotes and bare carriage returns is cut: a quoted field may hold a newline and a
bare carriage return ends a line, which only a sequential read can tell; such a file is one
piece.
"""

from __future__ import annotations

from typing import NamedTuple


class Scan(NamedTuple):
    """What the byte range [start, end) of a file holds."""

    start: int
    end: int
    newlines: int  # b"\n" in [start, end)
    first_newline: int | None  # the first b"\n" at or after start - 1 (before end), absolute
    quotes: bool
    crs: int  # b"\r" in [start, end)
    crlfs: int  # b"\r\n" starting in [start - 1, end - 1): each pair in one range's count


class Piece(NamedTuple):
    start: int
    end: int
    first_line: int  # 1-based line number of its first byte


def ranges(size: int, range_bytes: int, offset: int = 0) -> list[tuple[int, int]]:
    """The byte ranges ``size`` bytes from ``offset`` (a file: 0) are read in (none: one,
    empty)."""
    return [(offset + s, offset + min(s + range_bytes, size))
            for s in range(0, max(size, 1), range_bytes)]


def scan_range(data: bytes, start: int, end: int) -> Scan:
    """The scan of [start, end) from ``data``: the file's bytes [max(start - 1, 0), end)."""
    lead = 1 if start else 0
    body = data[lead:]
    first = data.find(b"\n")
    return Scan(start, end, body.count(b"\n"), None if first < 0 else start - lead + first,
                b'"' in body, body.count(b"\r"), data.count(b"\r\n"))


def joined(scans: list[Scan]) -> Scan:
    """The scan of consecutive ranges' union (each range's scan counts a b"\r\n" across its
    start, so none is counted twice)."""
    firsts = [s.first_newline for s in scans if s.first_newline is not None]
    return Scan(scans[0].start, scans[-1].end, sum(s.newlines for s in scans),
                firsts[0] if firsts else None, any(s.quotes for s in scans),
                sum(s.crs for s in scans), sum(s.crlfs for s in scans))


def plan_pieces(size: int, scans: list[Scan]) -> list[Piece]:
    """A file's pieces from the scans of its ranges (in order): one per range, each starting
    after the first newline at or after its range's start, empty ones left out."""
    if (any(s.quotes for s in scans) or sum(s.crs for s in scans) != sum(s.crlfs for s in scans)
            or len(scans) == 1):
        return [Piece(0, size, 1)]
    before, at = [], 0  # newlines before each range's start
    for s in scans:
        before.append(at)
        at += s.newlines
    cuts = [(0, 1)]  # (a piece's start, its first line)
    for k in range(1, len(scans)):
        j = next((j for j in range(k, len(scans)) if scans[j].first_newline is not None), None)
        if j is None:
            cuts.append((size, 0))
            continue
        p = scans[j].first_newline
        # newlines up to and including p: those before range j, and p itself if in range j
        cuts.append((p + 1, 1 + before[j] + (p >= scans[j].start)))
    ends = [c for c, _ in cuts[1:]] + [size]
    return [Piece(s, e, line) for (s, line), e in zip(cuts, ends) if s < e]
