# The project's commands. `make install` then `make test` is exactly what CI runs (.ci/run).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: install test lint typecheck unit bench run clean

install:  ## create .venv, install the service with its dev tools and the e2e tests' TypeScript MCP client
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev,server,bench]"
	npm ci --prefix tests/e2e/ts --no-audit --no-fund --loglevel=error
	mvn -q -B -f tests/servers/neo4j/pom.xml package

# Two pytest workers (pytest-xdist), a test file each at a time: a file's tests share its server.
PYTEST = $(BIN)/python -m pytest -q --durations=15 -n 2 --dist loadfile

test: lint typecheck  ## lint, type-check, the whole suite, then the e2e suite again on the server adapters
	$(PYTEST)
	MEMORY_TEST_PROFILE=server $(PYTEST) tests/e2e

lint:
	$(BIN)/ruff check memory_service indexer tests bench docs
	$(BIN)/ruff format --check memory_service indexer tests bench docs

typecheck:
	$(BIN)/mypy

unit:  ## fast: pure-logic tests only
	$(BIN)/python -m pytest -q tests/unit

bench:  ## search latency at 10k memories (see docs/benchmarks.md for the 100k run)
	$(BIN)/python bench/search_latency.py --n 10000

run:  ## the MCP server on stdio, embedded stores
	$(BIN)/memory-service

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
