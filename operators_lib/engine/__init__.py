"""Spark: the session, the driver's class-data archive, the worker daemon, code shipping,
and where the driver and executors read and write."""
