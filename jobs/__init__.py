"""spark-submit entry points and the ``twinflow`` command line."""
