"""The operator harness's state: an in-memory stand-in for the ``StatefulProcessorHandle`` that
Structured Streaming gives a processor's ``init``, with what the processors call
(operators_lib/stream: ``getValueState``, ``getMapState``, ``registerTimer``,
``deleteTimer``) and what the harness needs to drive them (the grouping key of the call, the
watermark, the due timers).

As Spark's state store keeps them: per grouping key; a value is a tuple of its schema's fields
(a value of another width fails here as it would there); a map without entries does not exist.
"""

from __future__ import annotations

from collections.abc import Iterator

from pyspark.sql import types as T

Key = tuple


def _stored(value: tuple, width: int) -> tuple:
    if not isinstance(value, tuple) or len(value) != width:
        raise TypeError(f"a state value is a tuple of {width} field(s), got {value!r}")
    return value


class ValueState:
    """One value per grouping key."""

    def __init__(self, handle: MemoryHandle, schema: T.StructType) -> None:
        self.handle, self.width = handle, len(schema.fields)
        self.values: dict[Key, tuple] = {}

    def get(self) -> tuple | None:
        return self.values.get(self.handle.key)

    def update(self, value: tuple) -> None:
        self.values[self.handle.key] = _stored(value, self.width)

    def clear(self) -> None:
        self.values.pop(self.handle.key, None)


class MapState:
    """A map of (user key -> value) per grouping key."""

    def __init__(self, handle: MemoryHandle, key_schema: T.StructType,
                 value_schema: T.StructType) -> None:
        self.handle = handle
        self.widths = len(key_schema.fields), len(value_schema.fields)
        self.maps: dict[Key, dict[tuple, tuple]] = {}

    def exists(self) -> bool:
        return self.handle.key in self.maps

    def getValue(self, key: tuple) -> tuple | None:
        return self.maps.get(self.handle.key, {}).get(key)

    def updateValue(self, key: tuple, value: tuple) -> None:
        entries = self.maps.setdefault(self.handle.key, {})
        entries[_stored(key, self.widths[0])] = _stored(value, self.widths[1])

    def removeKey(self, key: tuple) -> None:
        entries = self.maps.get(self.handle.key, {})
        entries.pop(key, None)
        if not entries:
            self.maps.pop(self.handle.key, None)

    def iterator(self) -> Iterator[tuple[tuple, tuple]]:
        return iter(list(self.maps.get(self.handle.key, {}).items()))


class MemoryHandle:
    """The handle: named states and event-time timers, per grouping key (``key``, set by the
    harness before each call)."""

    def __init__(self, time_mode: str) -> None:
        self.event_time = time_mode == "EventTime"
        self.key: Key | None = None
        self.watermark = 0  # ms; 0 before the first, as Spark reports it
        self.states: dict[str, ValueState | MapState] = {}
        self.timers: dict[Key, set[int]] = {}

    def getValueState(self, name: str, schema: T.StructType,
                      ttlDurationMs: int | None = None) -> ValueState:
        return self._state(name, lambda: ValueState(self, schema))

    def getMapState(self, name: str, key_schema: T.StructType,
                    value_schema: T.StructType,
                    ttlDurationMs: int | None = None) -> MapState:
        return self._state(name, lambda: MapState(self, key_schema, value_schema))

    def _state(self, name: str, new):
        if name not in self.states:
            self.states[name] = new()
        return self.states[name]

    def registerTimer(self, expiry_ms: int) -> None:
        if not self.event_time:
            raise ValueError("a timer needs time mode EventTime")
        if expiry_ms <= self.watermark:  # refused, as pyspark's TwsTester refuses it
            raise ValueError(f"a timer at {expiry_ms} ms is not after the watermark "
                             f"({self.watermark} ms)")
        self.timers.setdefault(self.key, set()).add(expiry_ms)

    def deleteTimer(self, expiry_ms: int) -> None:
        timers = self.timers.get(self.key, set())
        timers.discard(expiry_ms)
        if not timers:
            self.timers.pop(self.key, None)

    def due(self) -> list[tuple[int, Key]]:
        """The timers at or before the watermark, by expiry time (then key), each removed:
        Spark deletes a timer once it has fired."""
        fired = sorted((t, key) for key, ts in self.timers.items() for t in ts
                       if t <= self.watermark)
        for t, key in fired:
            self.key = key
            self.deleteTimer(t)
        return fired
