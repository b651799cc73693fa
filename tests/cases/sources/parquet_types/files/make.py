"""Writes items/items.parquet (pyarrow, two row groups): python files/make.py"""
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

rows = pa.table({
    "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
    "name": ["a", "", None, "d, quoted \"x\"", "é"],
    "qty": pa.array([10, None, -3, 0, 2147483647], pa.int32()),
    "price": [1.5, None, 1e300, -0.0, 3.25],
    "amount": pa.array([Decimal("1.10"), Decimal("-99999999.99"), None, Decimal("0.00"),
                        Decimal("5.50")], pa.decimal128(10, 2)),
    "ok": [True, False, None, True, False],
    "event_day": [dt.date(2024, 1, 1), dt.date(1970, 1, 1), None, dt.date(2024, 2, 29),
            dt.date(1, 1, 1)],
    "ts": pa.array([dt.datetime(2024, 1, 1, 10, 0, 0), dt.datetime(2024, 1, 1, 10, 0, 1, 500000),
                    dt.datetime(2024, 1, 1, 10, 0, 2, 123000), dt.datetime(2024, 1, 1, 10, 0, 3),
                    dt.datetime(2024, 1, 1, 10, 0, 4)], pa.timestamp("ms")),
    "unused": ["x"] * 5,
})
out = Path(__file__).parent / "items"
out.mkdir(exist_ok=True)
# (Flink 2.3 cannot read a dictionary-encoded DECIMAL: UnsupportedOperationException)
pq.write_table(rows, out / "items.parquet", row_group_size=3,
               use_dictionary=[c for c in rows.column_names if c != "amount"])
