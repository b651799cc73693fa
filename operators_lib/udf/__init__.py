"""Python user-defined functions: declared in SQL (``CREATE FUNCTION .. LANGUAGE PYTHON``),
loaded on the driver (loader), called by Spark on the executors (calls), written against
PyFlink's API (pyflink_api)."""
