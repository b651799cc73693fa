"""Hotspot splitting: a TopN rewritten into the two-level (nested) TopN of seed 003.

A TopN keeps each partition in one task: a hot partition (a global TopN, or one category that
carries most rows) makes that task the bottleneck. With a split factor S every TopN
(``ROW_NUMBER | RANK | DENSE_RANK``, not a deduplication) becomes::

    level 1: the same ranking over PARTITION BY <keys>, pmod(xxhash64(<row>), S),
             kept to ranks 1..end, the rank number not read (Flink's -D/+I form)
    level 2: the original ranking over PARTITION BY <keys> of level 1's rows

Why it is the same result: a row ranked r <= end in its partition has at most r - 1 rows
before it in its sub-partition too (and, for RANK / DENSE_RANK, every row before it also ranks
<= end), so level 1 keeps every row the single-level TopN shows, with all the rows that rank
before them; level 2 then ranks them exactly as the single level does. Ties rank by arrival in
both levels (level 1 passes each row's arrival on). The sub-partition is a hash of the row's
unique key if it has one (a GROUP BY's keys: an updated row stays in its sub-partition, and level
1 can run update-fast), else of the whole row; either way a retraction reaches the
sub-partition of the row it retracts. The split changes the
state layout (operator keys): a checkpoint is bound to the factor it was written with
(runs/binding.py rebuilds the state when the factor changes).
"""

from __future__ import annotations

from dataclasses import replace

from operators_lib.plan import (
    Field,
    Join,
    Node,
    Project,
    Rank,
    Scan,
    Union,
    find,
    quote,
    unique_key,
)
from operators_lib.types import FlinkType

SPLIT = "tw__split"  # the sub-partition of a row (0..S-1)
SPLIT_RANK = "tw__split_rank"  # level 1's rank number (not read)


def splittable(plan: Node) -> list[Rank]:
    """The TopNs a split factor applies to (deduplications keep one row: nothing to split)."""
    return [r for r in find(plan, Rank) if not r.dedup]


def split_topn(plan: Node, factor: int) -> Node:
    """``plan`` with every splittable TopN in two levels (``factor`` <= 1: unchanged)."""
    if factor <= 1:
        return plan
    return _rewrite(plan, factor)


def _rewrite(node: Node, factor: int) -> Node:
    if isinstance(node, Scan):
        return node
    if isinstance(node, Join):
        node = replace(node, left=_rewrite(node.left, factor),
                       right=_rewrite(node.right, factor))
    elif isinstance(node, Union):
        node = replace(node, inputs=tuple(_rewrite(i, factor) for i in node.inputs))
    else:
        node = replace(node, child=_rewrite(node.child, factor))
    if isinstance(node, Rank) and not node.dedup:
        return replace(node, child=_level_one(node, factor))
    return node


def _level_one(node: Rank, factor: int) -> Node:
    child = node.child
    names = [f.name for f in child.fields]
    same = tuple((n, quote(n)) for n in names)
    hashed = unique_key(child) or names  # a row keeps its sub-partition as it is updated
    split = f"pmod(xxhash64({', '.join(quote(n) for n in hashed)}), {factor})"
    bigint = FlinkType("BIGINT")
    pre = Project(child, (*same, (SPLIT, split)), (*child.fields, Field(SPLIT, bigint)))
    level = Rank(pre, node.func, (*node.partition_by, SPLIT), node.order_by, 1, node.end,
                 SPLIT_RANK, False, (*pre.fields, Field(SPLIT_RANK, bigint)),
                 time_kind=node.time_kind, source=node.source)
    return Project(level, same, child.fields)
