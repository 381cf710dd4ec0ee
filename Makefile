# The two commands of the README: `make demo` and `make test`. Each creates the virtual
# environment on first use (uv, from the lock file), so nothing needs installing by hand
# but Python 3.11 and Java 17+.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
UV_VERSION := 0.13.9
VENV := .venv
UV := .tools/bin/uv
export UV_PYTHON_DOWNLOADS := never

.PHONY: demo test test-fast lint bench env jvm-archive check-java clean

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --all-extras --python $(PYTHON)
	touch $@

env: $(VENV)/.synced

# Spark's classes archived once for faster JVM starts (jobs/runtime/class_archive.py; a no-op when built)
jvm-archive: env check-java
	$(VENV)/bin/python -m jobs.tools.class_archive_training

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "OffsetLake runs Spark, which needs Java 17 or newer, and no 'java' was found."; \
	  echo "Install it (Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17)"; \
	  echo "or put an installed JDK's bin/ on PATH (or set JAVA_HOME)."; exit 1; }
	@major=$$(java -version 2>&1 | awk -F'"' '/version/ {print $$2}' | cut -d. -f1); \
	 [ "$$major" -ge 17 ] 2>/dev/null || { \
	  echo "Java $$major found; OffsetLake's Spark needs Java 17 or newer. Install openjdk-17 and put it first on PATH."; exit 1; }

demo: jvm-archive
	$(VENV)/bin/offsetlake demo

# the house rules: lint, format, and the layers of the import-linter contract (pyproject.toml)
lint: env
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/lint-imports --no-cache > .lint-imports.log || { cat .lint-imports.log; exit 1; }

# every test: unit (no Spark), integration (real Spark and Delta) and end-to-end (marked slow)
test: lint jvm-archive
	$(VENV)/bin/python -m pytest

# all but the end-to-end tests (whole runs, real Airflow, the benchmark's agreement with DuckDB)
test-fast: lint jvm-archive
	$(VENV)/bin/python -m pytest -m "not slow"

bench: jvm-archive
	$(VENV)/bin/offsetlake bench

clean:
	rm -rf demo bench-results .pytest_cache spark-warehouse .lint-imports.log
