# Python runtime (runtimes/python): its unit tests and its certification over the engine protocol.
# Included by the root Makefile; paths are relative to the repository root.
PYTHON ?= python3
PY_DIR := runtimes/python
PY_ENGINE := $(PYTHON) -m sdods_rules engine
MYPY ?= $(PYTHON) -m mypy

.PHONY: test-python conformance-python python-version

python-version:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else "the Python runtime needs Python 3.9 or later, found " + sys.version.split()[0])'

test-python: python-version ## Python runtime: unit tests, the suite in-process, a differential fuzz run against the Go engine
	$(GO) build -o $(BIN)/ ./cmd/rules
	cd $(PY_DIR) && $(PYTHON) -m unittest -q
	@cd $(PY_DIR) && if $(MYPY) --version >/dev/null 2>&1; then $(MYPY) --python-version 3.11 --disallow-untyped-defs --warn-unused-ignores sdods_rules; \
	  else echo "mypy not installed: type check of runtimes/python skipped (Debian: apt-get install python3-mypy; MYPY=...)"; fi

conformance-python: python-version ## Python runtime: the 1899-case suite over the engine protocol, compiler and evaluator levels
	$(GO) build -o $(BIN)/ ./cmd/rulecheck
	cd $(PY_DIR) && $(CURDIR)/$(BIN)/rulecheck conformance -q --engine "$(PY_ENGINE)" --json $(CURDIR)/$(BIN)/conformance-python.json
	cd $(PY_DIR) && $(CURDIR)/$(BIN)/rulecheck conformance -q --level evaluator --engine "$(PY_ENGINE)" --json $(CURDIR)/$(BIN)/conformance-python-evaluator.json

RUNTIME_TESTS += test-python
RUNTIME_CONFORMANCE += conformance-python
