"""twinflow: Flink SQL semantics on Apache Spark, in stream and batch mode, with parity proofs."""

__version__ = "0.1.0"
