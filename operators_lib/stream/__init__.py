"""Plan -> Structured Streaming query; one module per stateful operator."""
