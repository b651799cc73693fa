"""How a stateful operator's state is written: one module owns the bytes of every page.

A page is one Arrow IPC stream of typed columns, no Python objects: a checkpoint depends on
Arrow's format and this module, never on Python class paths. Its schema names the operator (its
state variable) and the version of the operator's page layout (``VERSIONS``); a page of another
operator or version is refused with a StateError naming both versions, never misread. The
versions are part of the checkpoint's state layout (stream/layout.py), so a state of another
layout is rebuilt by replay or refused before any page is read; the check here guards the rest.

Two shapes of page:
- parts (``dumps``/``loads``): a bucket's page as named parts, each None, an int (a timer), a
  numpy array, a block of equal-length numpy columns, an Arrow table or a list of parts. They
  are written as one row whose columns are the parts (an array, a block or a table: a list of
  one element), with each part's kind and numpy dtypes in the schema, so that an array reads
  back with the dtype it was written with.
- rows (``dumps_rows``/``loads_rows``): a slot's page of keys (stream/rows.py), one row per
  key, its columns of Python values of the types the processor gives (else typed from them).

Numpy columns of Python objects are typed by Arrow from their values (strings, decimals,
dates, bytes, lists ..., NULL as None or NaN) and read back as Arrow hands them to pandas.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
from pyspark.sql import types as T

from operators_lib.errors import StateError

# The state variable of each operator -> the version of its page's layout. Bump an operator's
# version with any change to what its page holds or how; STATE_LAYOUT changes with it.
VERSIONS: dict[str, int] = {
    "dedup_first": 2,  # stream/dedup.py
    "group": 2,  # stream/group_agg.py (slot pages)
    "interval": 2,  # stream/interval_join.py
    "join": 2,  # stream/join.py
    "latest": 2,  # stream/proctime_temporal_join.py
    "over": 3,  # stream/over.py
    "temporal": 2,  # stream/temporal_join.py
    "topn": 2,  # stream/topn.py (slot pages)
    "windows": 2,  # stream/window_agg.py and the window TVFs' rank and join
}
STATE_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType())])  # one page
# The Arrow type of a slot page's column of values of a rows.value_kind (None: typed from the
# values): integers (int) and floats (float, int 0 before the first value) as they come.
KIND_TYPES: dict[str, pa.DataType] = {"int": pa.int64(), "float": pa.float64()}

_OPERATOR, _VERSION, _PARTS = b"twinflow.operator", b"twinflow.version", b"twinflow.parts"
# A page is small: handing its buffers to Arrow's thread pool costs more than writing them.
_WRITE = pa.ipc.IpcWriteOptions(use_threads=False)


class StateView:
    """The pages of one operator (its state variable's name), at this twinflow's version."""

    def __init__(self, operator: str):
        self.operator = operator
        self.version = VERSIONS[operator]

    # -- a page of parts ---------------------------------------------------------------------
    def dumps(self, page: dict) -> bytes:
        columns: dict[str, pa.Array] = {}
        parts = {name: self._part(name, value, columns) for name, value in page.items()}
        return self._write(list(columns.values()), list(columns), {_PARTS: json.dumps(parts)})

    def loads(self, blob: bytes) -> dict:
        batch, meta = self._read(blob)
        return {name: _value(name, part, batch)
                for name, part in json.loads(meta[_PARTS]).items()}

    # -- a page of rows ----------------------------------------------------------------------
    def dumps_rows(self, columns: dict[str, list], types: dict[str, pa.DataType]) -> bytes:
        """``columns`` of Python values, of ``types`` where given (typing them from the
        values costs twice the time)."""
        try:
            arrays = [pa.array(values, types.get(name)) for name, values in columns.items()]
        except (pa.ArrowException, OverflowError) as e:
            raise self._unwritable(e) from e
        return self._write(arrays, list(columns), {})

    def loads_rows(self, blob: bytes) -> pa.RecordBatch:
        return self._read(blob)[0]

    # -- the bytes: one record batch (a table costs twice the time to write) ----------------
    def _write(self, arrays: list[pa.Array], names: list[str], meta: dict[bytes, str]
               ) -> bytes:
        batch = pa.RecordBatch.from_arrays(arrays, names=names).replace_schema_metadata(
            {_OPERATOR: self.operator, _VERSION: str(self.version), **meta})
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema, options=_WRITE) as writer:
            writer.write_batch(batch)
        return sink.getvalue().to_pybytes()

    def _read(self, blob: bytes) -> tuple[pa.RecordBatch, dict[bytes, bytes]]:
        try:
            reader = pa.ipc.open_stream(blob)
        except pa.ArrowException as e:
            raise StateError(
                f"the {self.operator} operator's state holds a page of an earlier encoding "
                f"(Python objects, before version {self.version}); this twinflow reads "
                f"{self.operator} version {self.version} only") from e
        meta = reader.schema.metadata or {}
        operator = meta.get(_OPERATOR, b"?").decode()
        version = meta.get(_VERSION, b"?").decode()
        if operator != self.operator or version != str(self.version):
            raise StateError(
                f"the {self.operator} operator's state holds a page of {operator} version "
                f"{version}; this twinflow reads {self.operator} version {self.version} only")
        return reader.read_next_batch(), meta

    def _part(self, name: str, value, columns: dict[str, pa.Array]) -> dict:
        """``value``'s kind (and dtypes), its column added to ``columns``."""
        if value is None:
            return {"kind": "none"}
        if isinstance(value, list):
            return {"kind": "list", "items": [self._part(f"{name}.{i}", v, columns)
                                              for i, v in enumerate(value)]}
        if isinstance(value, int | np.integer):
            columns[name] = pa.array([int(value)], pa.int64())
            return {"kind": "int"}
        try:
            if isinstance(value, np.ndarray):
                columns[name] = _one(_arrow(value))
                return {"kind": "array", "dtype": value.dtype.str}
            if isinstance(value, pa.Table):
                columns[name] = _one(value.to_struct_array().combine_chunks())
                return {"kind": "table"}
            if isinstance(value, dict):
                if value:
                    columns[name] = _one(pa.StructArray.from_arrays(
                        [_arrow(a) for a in value.values()], names=list(value)))
                return {"kind": "block", "dtypes": {c: a.dtype.str for c, a in value.items()}}
        except (pa.ArrowException, OverflowError) as e:
            raise self._unwritable(e, name) from e
        raise TypeError(f"{self.operator} state: part {name} is a {type(value).__name__}")

    def _unwritable(self, e: Exception, part: str | None = None) -> StateError:
        where = f" (part {part})" if part else ""
        return StateError(f"the {self.operator} operator's state{where} has values Arrow "
                          f"cannot type: {e}")


def _arrow(values: np.ndarray) -> pa.Array:
    # Objects are typed by Arrow from the values (NaN: NULL); numbers keep NaN as a value.
    return pa.array(values, from_pandas=True) if values.dtype == object else pa.array(values)


def _one(values: pa.Array) -> pa.Array:
    """``values`` as one list value: a column of a one-row page."""
    return pa.LargeListArray.from_arrays(pa.array([0, len(values)], pa.int64()), values)


def _value(name: str, part: dict, batch: pa.RecordBatch):
    kind = part["kind"]
    if kind == "none":
        return None
    if kind == "list":
        return [_value(f"{name}.{i}", p, batch) for i, p in enumerate(part["items"])]
    if kind == "block" and not part["dtypes"]:
        return {}
    column = batch.column(name)
    if kind == "int":
        return column[0].as_py()
    values = column.values
    if kind == "array":
        return _numpy(values, part["dtype"])
    if kind == "table":
        return pa.Table.from_struct_array(values)
    return {f.name: _numpy(a, part["dtypes"][f.name])
            for f, a in zip(values.type, values.flatten())}


def _numpy(values: pa.Array, dtype: str) -> np.ndarray:
    """A column as the numpy array it was written from: writable, of its dtype; objects as
    Arrow hands them to pandas (as the processors received them)."""
    if np.dtype(dtype) == object:
        out = values.to_pandas(date_as_object=True).to_numpy(dtype=object)
        return out if out.flags.writeable else out.copy()
    return values.to_numpy(zero_copy_only=False, writable=True).astype(dtype, copy=False)


class PageState:
    """A processor's page of the bucket at hand, in a ValueState, through its view."""

    def __init__(self, handle, operator: str):
        self.value = handle.getValueState(operator, STATE_SCHEMA)
        self.view = StateView(operator)

    def load(self) -> dict | None:
        stored = self.value.get()
        return None if stored is None else self.view.loads(stored[0])

    def save(self, page: dict | None) -> None:
        """Write ``page`` (None: the bucket keeps nothing)."""
        if page is None:
            self.value.clear()
        else:
            self.value.update((self.view.dumps(page),))
