"""A query's state directory: staging and offers, run records, results, snapshots,
compaction, inspection and verification."""
