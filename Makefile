# The two commands of the README: `make demo` and `make test`. Each creates the virtual
# environment on first use (uv, from the lock file), so nothing needs installing by hand
# but Python 3.11 to 3.13 and Java 17+ (and, for the browser test, Debian's chromium).
#
# PYTHON: the newest interpreter that runs and is 3.11 to 3.13 (pyproject's requires-python),
# among python3.13, python3.12, python3.11, python3 and pyenv's versions; or PYTHON=... .
# VENV: where the environment goes, so that two Pythons can be tried side by side:
#   make PYTHON=python3.13 VENV=.venv313 test-fast

VERSION_OF := import sys; v = sys.version_info; sys.exit(not (3, 11) <= v[:2] < (3, 14)) or print("%d.%d.%d" % v[:3])
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in python3.13 python3.12 python3.11 python3 \
            $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[123]*/bin/python3; do \
            v=$$($$p -c '$(VERSION_OF)' 2>/dev/null) && echo "$$v $$(command -v $$p)"; done | sort -rV | head -1 | cut -d' ' -f2)
endif
UV_VERSION := 0.13.9
VENV ?= .venv
UV := .tools/bin/uv
CHROMIUM ?= /usr/bin/chromium
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: demo test test-fast test-long lint bench env jvm-archive check-java check-python browser clean

check-python:
	@[ -n "$(PYTHON)" ] || { \
	  echo "OffsetLake needs Python 3.11, 3.12 or 3.13, and none was found (python3.13, python3.12, python3.11, python3)."; \
	  echo "Install one (Debian/Ubuntu: sudo apt-get install python3.11 python3.11-venv; macOS: brew install python@3.13)"; \
	  echo "or name it: make PYTHON=/path/to/python3.12 ..."; exit 1; }

$(UV): | check-python
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --all-extras --python $(PYTHON)
	touch $@

# the report's browser test opens it in Debian's Chromium: installed here when missing (as root),
# else the exact command to run; the test itself fails, never skips, without it
browser:
	@[ -x "$(CHROMIUM)" ] || command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the browser test ..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "The browser test needs Chromium: sudo apt-get install chromium (or CHROMIUM=/path/to/chromium)"; exit 1; \
	  fi; }

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

# every test: unit (no Spark), integration (real Spark and Delta) and end-to-end (marked slow),
# but the long ones (marked long: the crash trial, the soak, a standalone cluster), which test-long runs
test: lint jvm-archive browser
	$(VENV)/bin/python -m pytest -m "not long"

# the long tests alone: each makes many whole runs, most in processes of their own
test-long: lint jvm-archive
	$(VENV)/bin/python -m pytest -m long

# all but the end-to-end tests (whole runs, real Airflow, the benchmark's agreement with DuckDB)
test-fast: lint jvm-archive browser
	$(VENV)/bin/python -m pytest -m "not slow and not long"

bench: jvm-archive
	$(VENV)/bin/offsetlake bench

clean:
	rm -rf demo bench-results .pytest_cache spark-warehouse .lint-imports.log
