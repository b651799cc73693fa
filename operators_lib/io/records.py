"""The JSON records twinflow writes and reads back, typed: the state's manifest and run records
(state/manifest.py, state/lifecycle.py) and the run reports (ops/reports.py).

One rule for all of them, so that a typed record writes the JSON the dicts it replaced wrote:
a key is written when it was read or set, or when it holds something else than its default
(a default dict that was filled in). A key that an older twinflow did not write thus reads as
its default and stays absent when the record is written again; ``None`` that was set is
written (``null``). A key the model does not know (a newer twinflow's, or one added by hand)
is kept and written back: twinflow never drops what a record holds, and a rollback of
twinflow's code does not break the states a newer version wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from operators_lib.errors import StateError


class Record(BaseModel):
    """A JSON record (module docstring); assignments are checked against the field's type."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        fields = type(self).model_fields
        return {k: v for k, v in data.items()
                if k not in fields or k in self.model_fields_set
                or getattr(self, k) != fields[k].get_default(call_default_factory=True)}

    def as_json(self) -> dict[str, Any]:
        """The record as its JSON file holds it."""
        return self.model_dump(mode="json")

    @classmethod
    def read(cls, path: Path) -> Self:
        """The record in ``path``; StateError if it is not one (damage, or a bug)."""
        try:
            return cls.model_validate_json(
                (Path(path) if isinstance(path, str) else path).read_bytes())
        except ValidationError as e:
            raise StateError(f"{path}: not a valid {cls.__name__}: " + "; ".join(
                f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
                             ) from None

    def write(self, path: Path) -> None:
        """Write the record to ``path``, atomically."""
        # (output.py imports Spark's modules: not for a reader such as the gate's task)
        from operators_lib.io.output import write_json

        write_json(path, self.as_json())
