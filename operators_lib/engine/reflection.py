"""Py4J's name lookups, made once per JVM instead of on every call.

PySpark reaches the JVM by name: ``F.col("x")`` looks up the class
``org.apache.spark.sql.functions`` and then its member ``col`` (two round trips, the second a
scan of the class's ~1,000 methods) before it calls it, and every list it passes goes through
``PythonUtils``, an unqualified name the JVM resolves by trying each imported package in turn
(a failed class load over the whole class path for each miss). Planning and running one corpus
case at plan level made ~1,800 round trips, a third of them such lookups.

A lookup's answer never changes while the JVM runs: a class name resolves to the same class, a
member name of a class to the same method (overloads are chosen when it is called). So the
first answer is kept as an attribute of the object asked (Python then no longer calls
``__getattr__`` for it), for classes, packages and methods. A static field's value is not
kept: it may change.
"""

from __future__ import annotations

from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView

_KEPT = (JavaClass, JavaPackage, JavaMember)


def _remembering(lookup):
    def cached(self, name: str):
        found = lookup(self, name)
        if isinstance(found, _KEPT):
            self.__dict__[name] = found
        return found

    cached.__wrapped__ = lookup
    return cached


def remember_lookups() -> None:
    """Keep py4j's class, package and method lookups (idempotent)."""
    for kind in (JVMView, JavaPackage, JavaClass):
        if not hasattr(kind.__getattr__, "__wrapped__"):
            kind.__getattr__ = _remembering(kind.__getattr__)
