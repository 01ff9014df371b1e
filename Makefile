# analytics-acp: every command a user or CI needs. `make demo` and `make test` work on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
# Every workspace member with a pyproject.toml is installed (editable) into the one venv.
# tests/plugins/acpexample is the conformance kit's reference connector (id `example`).
MEMBERS := core build tests/plugins/acpexample $(sort $(dir $(wildcard connectors/*/pyproject.toml tools/*/pyproject.toml)))
STAMP := $(VENV)/.installed
CONNECTOR ?= databases
# Source folders the type checker reads (each is also a module base: MYPYPATH).
SRC_DIRS := core/src build/src $(sort $(wildcard connectors/*/src tools/*/src)) tests/plugins/acpexample/src
empty :=
space := $(empty) $(empty)

.PHONY: help setup venv system-deps npm-deps test test-fast lint demo build build-all bench mutation screenshots clean

help:
	@echo "make demo    - set up and run the ACP Bridge demo (SQLite + prediction)"
	@echo "make test    - set up everything and run the whole test suite (in parallel: TEST_WORKERS)"
	@echo "make test-fast - the inner loop: no builds, npm clients or slow tests"
	@echo "make build CONNECTOR=<id> - freeze one connector into dist/<id>/ and dist/<id>-<version>.zip"
	@echo "make bench   - run the benchmarks (tools/bench/results/latest.json)"
	@echo "make lint    - ruff and mypy (strict on core/)"
	@echo "make mutation - mutmut over the read-only fence, inference and URL keys (not part of make test)"
	@echo "make screenshots - the set-up page's README screenshots, taken by its Chromium tests (tools/ui/docs/screenshots)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip uv

# Bytecode is written at install (uv does not by default) and for the workspace's own sources: every
# process then starts from .pyc, also where PYTHONDONTWRITEBYTECODE is set (Python reads .pyc files
# but never writes them there, so each start compiled every module it imports: about 60% of a bare
# MCP server's start-up, bench case 4). A source edited later is recompiled in memory as before.
$(STAMP): $(BIN)/python $(wildcard core/pyproject.toml build/pyproject.toml tests/plugins/*/pyproject.toml connectors/*/pyproject.toml tools/*/pyproject.toml) requirements-dev.txt
	$(UV) pip install --python $(BIN)/python -q --compile-bytecode -r requirements-dev.txt $(foreach m,$(MEMBERS),-e $(m))
	$(BIN)/python -m compileall -q -j 0 $(SRC_DIRS) > /dev/null
	touch $(STAMP)

venv: $(STAMP)

# Debian packages the suite needs (Chromium for the browser connector). Needs root (CI runs as root).
system-deps:
	@bash tools/setup/system-deps.sh

# Third-party MCP clients (TypeScript SDK, Inspector, conformance suite, Node 22), from pinned lock files.
npm-deps:
	@bash tools/setup/npm-deps.sh

setup: venv system-deps npm-deps

# CI (.ci/run) runs `make test`, so lint (ruff + mypy) runs there too, before the suite.
test: setup lint
	bash tools/setup/run-tests.sh

# The inner loop (< 2 min on two cores): no frozen builds, no npm clients, none of the tests profiled
# as slow (tests/slow_tests.txt); in parallel like `make test` (tests/README.md).
test-fast: venv
	bash tools/setup/run-tests.sh -m "not build and not external and not slow" -x

lint: venv
	$(BIN)/ruff check .
	MYPYPATH=$(subst $(space),:,$(SRC_DIRS)) $(BIN)/mypy $(SRC_DIRS)

demo: venv
	$(BIN)/python tools/bridge/demo/run_demo.py

build: venv
	$(BIN)/analytics-acp build $(CONNECTOR) --out dist

build-all: venv
	$(BIN)/analytics-acp build --all --out dist

bench: venv
	$(BIN)/analytics-acp bench

# Mutation testing (issue 38.9; tests/README.md has the last score). Its own venv: mutmut 2 and its
# dependencies stay out of the one the suite runs in.
.venv-mutation/.installed: requirements-mutation.txt
	$(PYTHON) -m venv .venv-mutation
	.venv-mutation/bin/python -m pip install -q -r requirements-mutation.txt
	touch $@

mutation: venv .venv-mutation/.installed
	bash tests/mutation/run.sh

# The README pictures of `analytics-acp ui` come from its own Chromium tests (shot() in tools/ui/tests/uiharness.py).
screenshots: venv
	ANALYTICS_ACP_SCREENSHOT_DIR=$(CURDIR)/tools/ui/docs/screenshots $(BIN)/pytest -q -p no:cacheprovider \
		tools/ui/tests/test_ui_page.py tools/ui/tests/test_ui_clients_datasets.py tools/ui/tests/test_ui_activity_queries.py

clean:
	rm -rf $(VENV) .venv-mutation dist .demo
