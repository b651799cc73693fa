"""One SQL statement of a script, with where it stands (file and line) for error messages."""

from __future__ import annotations

from dataclasses import dataclass

from operators_lib.errors import SqlError


@dataclass(frozen=True)
class Statement:
    text: str
    line: int  # line of the statement's first character in its file
    source: str  # file name, for error messages

    def error(self, message: str, rel_line: int | None = None) -> SqlError:
        line = self.line + rel_line - 1 if rel_line else self.line
        return SqlError(message, line, self.source)
