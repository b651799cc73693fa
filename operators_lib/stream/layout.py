"""The layout of a query's stream state: what its checkpoint's operators store and how its
changelog is written. State of one layout is never read by code of another: a scheduled
query's state of another layout is rebuilt by replaying its staged input
(runs/binding.bind_state), a stopped ``twinflow run`` of another layout starts afresh
(runs/staging._fingerprint).

Any change to how an operator encodes its state (rows.SLOTS or BUCKETS, a page's layout: its
version in stream/state_view.VERSIONS, a processor's state variables), to the changelog's
layout, to how the stream's source names what it read (the checkpoint's source log), or to
what a scheduled query keeps beside them (the result store's columns, the left-out rows) must
change ``STATE_LAYOUT``: bump ``_ENCODING`` where nothing else in the string changes.
"""

from __future__ import annotations

from operators_lib.stream.rows import BUCKETS, SLOTS
from operators_lib.stream.runner import CHANGELOG_LAYOUT
from operators_lib.stream.state_view import VERSIONS

# 2: a state TTL query's result store and left-out rows keep the expired keys' hashes;
# 3: a slot page holds each key's value encoded on its own (rows.SlotState);
# 4: OVER keeps one page per bucket of partition keys (stream/over.py);
# 5: so does keep-first deduplication (stream/dedup.py);
# 6: and the regular join (stream/join.py);
# 7: every page is typed Arrow columns with its operator's version (stream/state_view.py)
_ENCODING = 7
# The file source reads the staged directories through their offer logs (io/offers.py);
# before: hard links in source/<table>/, admitted by modification time.
_SOURCE = "offer-log/1"


def state_layout(versions: dict[str, int]) -> str:
    """The layout string with the operators' page ``versions`` (state_view.VERSIONS)."""
    pages = ",".join(f"{name}/{version}" for name, version in sorted(versions.items()))
    return (f"{CHANGELOG_LAYOUT};buckets={BUCKETS};slots={SLOTS};encoding={_ENCODING};"
            f"pages={pages};source={_SOURCE}")


STATE_LAYOUT = state_layout(VERSIONS)
# What states that a manifest does not name a layout for were written with (before layouts
# were recorded): frozen, whatever STATE_LAYOUT becomes.
UNRECORDED = "changelog/2;buckets=1024;slots=4096;encoding=1"
