"""CONVERT_TZ(text, fromZone, toZone) as Flink 2.3 runs it (DateTimeUtils.convertTz): the text
read by a lenient SimpleDateFormat('yyyy-MM-dd HH:mm:ss') as a wall time of the java.util
TimeZone ``fromZone`` (an unknown one is GMT), written in ``toZone``.

Reproduced: numbers of any width that roll over (2024-02-30 is March 1, hour 25 the next day),
text after the seconds ignored (not a further digit), and a wall time a clock skips read at the
offset before the change (as Spark's to_utc_timestamp). Refused, failing the run with the
text: any other shape (Flink reads some, gives NULL for others), a year before 1900 or after
9999 (java.util.TimeZone and Spark's zone rules differ before 1900), and a wall time a clock
repeats (Flink takes the standard offset, Spark the earlier one). Zones are literals, resolved
by Java's TimeZone when planning.
"""

from __future__ import annotations

from operators_lib.sql.functions.base import Call, Function, _string, value_refused
from operators_lib.sql.functions.json_text import let, q

_TEXT = (r"^([0-9]{1,6})-([0-9]{1,6})-([0-9]{1,6}) ([0-9]{1,6}):([0-9]{1,6}):([0-9]{1,6})"
         r"(?![0-9])")
_FIELDS = ("y", "mo", "d", "h", "mi", "s")


def _zone(c: Call, i: int) -> str:
    """Spark's name of the zone Java's TimeZone reads argument ``i`` as."""
    java = c.env.time_zone_id(c.string(i, "time zone"))
    return q("UTC" if java == "GMT" else java)


def _offset(instant: str, zone: str) -> str:
    return f"(unix_seconds(from_utc_timestamp({instant}, {zone})) - unix_seconds({instant}))"


def _convert_tz(c: Call) -> str:
    c.require(0, _string, "a string")
    text, source, target = c.sql[0], _zone(c, 1), _zone(c, 2)
    fields = ", ".join(f"'{f}', CAST(regexp_extract({text}, {q(_TEXT)}, {i + 1}) AS BIGINT)"
                       for i, f in enumerate(_FIELDS))

    def wall(p: str) -> str:
        day = f"add_months(make_date({p}.y, 1, 1), CAST({p}.mo - 1 AS INT))"
        seconds = f"({p}.d - 1) * 86400 + {p}.h * 3600 + {p}.mi * 60 + {p}.s"
        return f"timestampadd(SECOND, {seconds}, CAST({day} AS TIMESTAMP))"

    def converted(p: str) -> str:
        bounded = (f"{p}.y BETWEEN 1900 AND 9999 AND {p}.mo <= 120 AND {p}.d <= 3660 AND "
                   f"greatest({p}.h, {p}.mi, {p}.s) <= 100000")

        def at(w: str) -> str:
            instant = f"to_utc_timestamp({w}, {source})"
            later = f"timestampadd(SECOND, {_offset(instant, source)} - " \
                    f"{_offset(f'timestampadd(DAY, 1, {instant})', source)}, {instant})"
            repeated = f"({later} > {instant} AND from_utc_timestamp({later}, {source}) = {w})"
            out = f"from_utc_timestamp({instant}, {target})"
            return (f"CASE WHEN year({w}) BETWEEN 1900 AND 9999 AND NOT {repeated} AND "
                    f"year({out}) BETWEEN 1900 AND 9999 THEN date_format({out}, "
                    f"'yyyy-MM-dd HH:mm:ss') END")
        return f"IF({bounded}, {let(wall(p), at)}, NULL)"

    refused = value_refused(f"concat('CONVERT_TZ of a text twinflow does not read as Flink "
                            f"does (another shape, a year outside 1900..9999, or a wall time "
                            f"the clock repeats): ', {text})", "string")
    return (f"CASE WHEN {text} IS NULL THEN NULL WHEN NOT {text} RLIKE {q(_TEXT)} THEN {refused} "
            f"ELSE coalesce({let(f'named_struct({fields})', converted)}, {refused}) END")


FUNCTIONS = [Function("CONVERT_TZ", 3, 3, _convert_tz)]
