"""Stream against batch: the comparison and its scope."""
