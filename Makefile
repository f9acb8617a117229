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

# The browser test drives Debian's chromium (PBMSERV_CHROMIUM names another binary) through
# the playwright package of the test extras; without it that test is skipped and says why.
# The store tests run on SQLite always, and again on PostgreSQL when
# PBMSERV_TEST_DATABASE_URL names one (.ci/run sets it when the local server answers).
test: $(STAMP)
	$(BIN)/ruff check .
	@test -x "$${PBMSERV_CHROMIUM:-/usr/bin/chromium}" || echo "== Chromium not found:" \
		"the browser test (tests/test_web_browser.py) is skipped; apt-get install -y chromium"
	env -u PBMSERV_TEST_DATABASE_URL $(BIN)/python -m pytest -q $(PYTEST_ARGS)
	@if [ -n "$$PBMSERV_TEST_DATABASE_URL" ]; then \
		echo "== store tests again on $$PBMSERV_TEST_DATABASE_URL"; \
		$(BIN)/python -m pytest -q -m store $(PYTEST_ARGS); \
	else echo "== PBMSERV_TEST_DATABASE_URL not set: store tests ran on SQLite only"; fi

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy pbmserv

bench: $(STAMP)
	$(BIN)/python bench/engines.py

run: $(STAMP)
	$(BIN)/pbmserv serve

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
