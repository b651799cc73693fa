"""Flink SQL -> catalog + logical plan; errors name the unsupported construct and its line."""

from operators_lib.sql.script import Script, load_script

__all__ = ["Script", "load_script"]
