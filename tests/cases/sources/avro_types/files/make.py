"""Writes items/items.avro (fastavro, blocks of 2 records, snappy-compressed as Flink writes
by default): python files/make.py"""
import datetime as dt
from decimal import Decimal
from pathlib import Path

import fastavro


def nullable(t):
    return ["null", t]


schema = fastavro.parse_schema({"type": "record", "name": "item", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": nullable("string")},
    {"name": "qty", "type": nullable("int")},
    {"name": "price", "type": nullable("double")},
    {"name": "amount", "type": nullable({"type": "bytes", "logicalType": "decimal",
                                         "precision": 10, "scale": 2})},
    {"name": "ok", "type": nullable("boolean")},
    {"name": "event_day", "type": nullable({"type": "int", "logicalType": "date"})},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "unused", "type": "string"},
]})
utc = dt.UTC
records = [
    {"id": 1, "name": "a", "qty": 10, "price": 1.5, "amount": Decimal("1.10"), "ok": True,
     "event_day": dt.date(2024, 1, 1), "ts": dt.datetime(2024, 1, 1, 10, 0, 0, tzinfo=utc)},
    {"id": 2, "name": "", "qty": None, "price": None, "amount": Decimal("-99999999.99"),
     "ok": False, "event_day": dt.date(1970, 1, 1),
     "ts": dt.datetime(2024, 1, 1, 10, 0, 1, 500000, tzinfo=utc)},
    {"id": 3, "name": None, "qty": -3, "price": 1e300, "amount": None, "ok": None,
     "event_day": None, "ts": dt.datetime(2024, 1, 1, 10, 0, 2, 123000, tzinfo=utc)},
    {"id": 4, "name": "é, \"x\"", "qty": 2147483647, "price": -0.0, "amount": Decimal("0.00"),
     "ok": True, "event_day": dt.date(2024, 2, 29),
     "ts": dt.datetime(2024, 1, 1, 10, 0, 3, tzinfo=utc)},
]
for r in records:
    r["unused"] = "x"
out = Path(__file__).parent / "items"
out.mkdir(exist_ok=True)
with open(out / "items.avro", "wb") as fh:
    fastavro.writer(fh, schema, records, codec="snappy", sync_interval=64)
