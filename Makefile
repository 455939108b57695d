# Two entry points, both safe on a fresh clone: `make demo` and `make check`.
# Each creates or refreshes .venv with an interpreter >= 3.12 found by scripts/find-python.

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo check lint types test bench conformance clean

$(STAMP): pyproject.toml scripts/find-python
	@py=$$(scripts/find-python) || exit 1; \
	if [ ! -x $(BIN)/python ] || ! $(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
		echo "creating $(VENV) with $$py"; rm -rf $(VENV); "$$py" -m venv $(VENV) || exit 1; \
	fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,openai,anthropic,mcp,embeddings,postgres,temporal,otel,speedups]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m weakincentives demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

types: $(STAMP)
	$(BIN)/mypy --strict src tests examples benchmarks

test: $(STAMP)
	$(BIN)/coverage erase
	$(BIN)/python -m pytest -q -n auto --cov --cov-report=term-missing:skip-covered --cov-fail-under=95

check: lint types test

# The official MCP conformance suite (npm) and a Node 22 binary, installed into the
# git-ignored .conformance/ from the pinned manifest; kept out of `make check` because
# it downloads from the npm registry.
CONFORMANCE := .conformance
$(CONFORMANCE)/.installed: scripts/conformance/package.json scripts/conformance/package-lock.json
	mkdir -p $(CONFORMANCE)
	cp scripts/conformance/package.json scripts/conformance/package-lock.json $(CONFORMANCE)/
	cd $(CONFORMANCE) && npm ci --no-audit --no-fund --loglevel=error --engine-strict=false
	@touch $@

conformance: $(STAMP) $(CONFORMANCE)/.installed
	$(BIN)/python scripts/conformance/run.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) $(CONFORMANCE) .coverage .mypy_cache .pytest_cache .ruff_cache
