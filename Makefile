# The two commands of the README: `make run` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck bench venv clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# The store tests run on SQLite always, and again on PostgreSQL when
# PBMSERV_TEST_DATABASE_URL names one (.ci/run sets it when the local server answers).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	env -u PBMSERV_TEST_DATABASE_URL $(BIN)/python -m pytest -q $(PYTEST_ARGS)
	@if [ -n "$$PBMSERV_TEST_DATABASE_URL" ]; then \
		echo "== store tests again on $$PBMSERV_TEST_DATABASE_URL"; \
		$(BIN)/python -m pytest -q -m store $(PYTEST_ARGS); \
	else echo "== PBMSERV_TEST_DATABASE_URL not set: store tests ran on SQLite only"; fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy pbmserv

bench: $(STAMP)
	$(BIN)/python bench/engines.py

run: $(STAMP)
	$(BIN)/pbmserv serve

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
