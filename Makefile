# sdckit: the two commands are `make demo` and `make test`; both set everything up.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-fast lint format bench clean typecheck validate validate-fast

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "sdckit needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# ruff (lint, format), mypy on src/, and the numpydoc check of every public callable
# (tests/api/test_docstrings.py, also part of the suite).
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/api/test_docstrings.py

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks examples
	$(BIN)/ruff check --fix src tests benchmarks examples

# Installs and starts Chromium and PostgreSQL (scripts/test-services.sh), then runs every test.
test: $(STAMP) lint
	bash scripts/test-services.sh .test-services.env
	set -a && . ./.test-services.env && set +a && $(BIN)/python -m pytest -n auto --durations=15

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n auto -m "not slow"

# Every validation script against the papers (examples/validation/registry.py): first the
# generated blocks of docs/validation.md and docs/swaprate.md (and docs/rwn.md's worked example)
# are rewritten, then the entries no
# block runs write their outputs to validation-output/ (index.md lists paper, command, exit
# code and time); a failure of either fails the target after both have run. validate-fast
# runs the fast subset and checks the reproduced numbers.
validate: $(STAMP)
	$(BIN)/python scripts/regenerate_docs.py docs/validation.md docs/swaprate.md docs/rwn.md; \
	blocks=$$?; \
	$(BIN)/python examples/validation/registry.py --out validation-output \
		--skip-blocks docs/validation.md docs/swaprate.md && exit $$blocks

validate-fast: $(STAMP)
	$(BIN)/python examples/validation/registry.py --out validation-output --fast

# Rewrites the generated blocks of docs/benchmarks.md and README.md (scripts/regenerate_docs.py),
# then runs the benchmarks no block names yet.
bench: $(STAMP)
	$(BIN)/python scripts/regenerate_docs.py docs/benchmarks.md README.md --unreferenced benchmarks

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache

typecheck: $(STAMP)
	$(BIN)/python -m mypy
