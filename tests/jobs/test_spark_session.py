"""The session build_session starts: the JVM options it gives the driver it launches."""

from __future__ import annotations

from jobs.spark import JIT_OPTIONS


def test_the_driver_jvm_compiles_generated_methods_of_any_size(spark):
    # the test session is a local master started by build_session (tests/conftest.py)
    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()  # type: ignore[union-attr]
    arguments = list(runtime.getInputArguments())
    assert JIT_OPTIONS in arguments
    assert any(a.startswith("-Dderby.system.home=") for a in arguments)
