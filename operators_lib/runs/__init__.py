"""Runs: the bounded run, scheduled increments, backfills, hotspot splitting."""
