"""What twinflow needs to know about a Java regular expression before handing it to Spark.

Flink and Spark both use ``java.util.regex``, but Flink's REGEXP_EXTRACT returns NULL where
Spark's returns '' (no match, a group that took no part in the match, a group index beyond the
pattern's groups) and NULL for an invalid pattern where Spark fails. The group count comes from
Java itself; whether a group always takes part in a match is read from the pattern here.
"""

from __future__ import annotations


class RegexTooComplex(ValueError):
    """A construct the structure reader does not follow (then the caller refuses the call)."""


def group_always_participates(pattern: str, group: int) -> bool:
    """Does capturing group ``group`` (1-based; 0 = the whole match) take part in every match of
    ``pattern``? False when it, or a group around it, may repeat zero times (``?``, ``*``,
    ``{0,n}``) or lies in one branch of an alternation ``|``. ``pattern`` must be valid."""
    if group == 0:
        return True
    stack: list[list] = [[0, False]]  # open groups: [capturing number or None, saw '|' in it]
    enclosing: list[list] | None = None  # the frames around the target group, and its own
    optional, count, i, n = False, 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            end = pattern.find("\\E", i + 2) if pattern.startswith("\\Q", i) else -2
            i = i + 2 if end == -2 else (n if end < 0 else end + 2)
        elif c == "[":
            i = _skip_class(pattern, i)
        elif c == "(":
            number = None
            if not pattern.startswith("(?", i) or (pattern.startswith("(?<", i) and not
                                                   pattern.startswith(("(?<=", "(?<!"), i)):
                count += 1
                number = count
            elif not pattern.startswith(("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"), i):
                raise RegexTooComplex(pattern)  # inline flags and the like
            stack.append([number, False])
            if number == group:
                enclosing = list(stack)
            i += 1
        elif c == ")":
            frame = stack.pop()
            i += 1
            if enclosing is not None and any(frame is f for f in enclosing):
                own = frame[0] == group
                optional = optional or _zero_quantifier(pattern, i) or (frame[1] and not own)
        else:
            if c == "|":
                stack[-1][1] = True
            i += 1
    if enclosing is None:
        raise RegexTooComplex(pattern)
    return not (optional or stack[0][1])  # a '|' outside every group makes it conditional too


def _skip_class(pattern: str, i: int) -> int:
    """Index after the character class opening at ``i`` (Java allows nested classes)."""
    depth, i = 0, i
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
            if pattern.startswith(("[^]", "[]"), i):
                i += 3 if pattern[i + 1] == "^" else 2
                continue
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def _zero_quantifier(pattern: str, i: int) -> bool:
    """Does the quantifier at ``i`` (if any) allow zero repetitions?"""
    if i >= len(pattern):
        return False
    if pattern[i] in "?*":
        return True
    if pattern[i] == "{":
        body = pattern[i + 1:pattern.find("}", i)]
        return body.split(",")[0].strip() == "0"
    return False
