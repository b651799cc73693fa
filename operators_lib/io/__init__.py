"""Input parsing and staging, outputs."""
