"""py4j's lookups remembered (operators_lib/engine/reflection.py): a class or method is looked
up in the JVM once; a static field is read each time; results are unchanged."""

from __future__ import annotations

from pyspark.sql import functions as F


def _round_trips(spark, action) -> int:
    client = spark.sparkContext._gateway._gateway_client
    sent = []
    send = client.send_command

    def counting(command, *args, **kwargs):
        sent.append(command)
        return send(command, *args, **kwargs)

    client.send_command = counting
    try:
        action()
    finally:
        del client.send_command
    return len([c for c in sent if not c.startswith("m")])  # not py4j's garbage collection


def test_a_function_is_looked_up_once_then_only_called(spark):
    F.upper(F.col("a"))
    # F.col: the call; F.upper: the call and its argument's conversion, no lookups
    assert _round_trips(spark, lambda: F.col("a")) == 1
    assert _round_trips(spark, lambda: F.upper(F.col("a"))) == 2
    assert str(F.upper(F.col("a"))) == "Column<'upper(a)'>"


def test_a_static_field_is_read_each_time_and_classes_are_unchanged(spark):
    jvm = spark.sparkContext._jvm
    integer = jvm.java.lang.Integer
    assert integer.MAX_VALUE == 2**31 - 1
    assert "MAX_VALUE" not in vars(integer)  # a field's value may change: not kept
    assert integer.parseInt("42") == 42 and "parseInt" in vars(integer)
    assert jvm.java.lang.Integer is integer  # the package kept its class
    assert jvm.PythonUtils is jvm.PythonUtils  # an imported name, resolved once
