"""The Java runtime Spark launches: where it is, and its version."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess


class JavaMissingError(RuntimeError):
    """No usable Java runtime for Spark."""


def java_executable() -> str | None:
    """The ``java`` Spark launches: JAVA_HOME's, else the first on PATH (None if neither)."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    return java if java and os.path.exists(java) else None


def check_java() -> str:
    """Return the Java version line, or explain how to install Java 17+."""
    java = java_executable()
    if java is None:
        raise JavaMissingError(
            "Spark needs Java 17 or newer and none was found. Install it (Debian/Ubuntu: "
            "'apt-get install openjdk-17-jre-headless'; macOS: 'brew install openjdk@17') "
            "or set JAVA_HOME to an installed JDK."
        )
    return _version_line(java)


@functools.cache
def _version_line(java: str) -> str:
    """``java -version``'s first line, probed once per executable (a session's start asks twice:
    check_java, then the class archive's name)."""
    probe = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    return (probe.stderr or probe.stdout).splitlines()[0] if (probe.stderr or probe.stdout) else ""
