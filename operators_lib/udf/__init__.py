"""Python user-defined functions at run time: called by Spark on the executors (calls), written
against PyFlink's API (pyflink_api). Their declarations are planned in sql/python_udfs.py."""
