# The two commands of the README: `make run` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Under `faketime -f '+120d' make test` only the calendar moves: libfaketime 0.9.10 would
# shift the monotonic clock too, and then every timed wait (threading.Event.wait(timeout))
# hangs for ever; tests/faketime/sitecustomize.py mends time.sleep in that mode.
ifneq ($(findstring faketime,$(LD_PRELOAD)),)
export FAKETIME_DONT_FAKE_MONOTONIC := 1
export PYTHONPATH := $(CURDIR)/tests/faketime$(if $(PYTHONPATH),:$(PYTHONPATH))
endif

.PHONY: run test lint typecheck bench venv clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Lint (ruff, format check, import contracts) and type check first, then the suite in
# parallel (pytest-xdist).
# Store tests run on a SQLite file, and on PostgreSQL as well when PBMSERV_TEST_DATABASE_URL
# names a database made for the run (.ci/run creates one with a unique name and drops it).
# The browser test drives Debian's chromium (PBMSERV_CHROMIUM names another binary) through
# the playwright package of the test extras; without it that test is skipped and says why.
TEST_JOBS ?= auto
test: $(STAMP) lint typecheck
	@test -x "$${PBMSERV_CHROMIUM:-/usr/bin/chromium}" || echo "== Chromium not found:" \
		"the browser test (tests/test_web_browser.py) is skipped; apt-get install -y chromium"
	@if [ -n "$$PBMSERV_TEST_DATABASE_URL" ]; then \
		echo "== store tests on SQLite and on PostgreSQL ($${PBMSERV_TEST_DATABASE_URL##*/})"; \
	else echo "== PBMSERV_TEST_DATABASE_URL not set: store tests run on SQLite only"; fi
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy pbmserv

bench: $(STAMP)
	$(BIN)/python bench/engines.py

run: $(STAMP)
	$(BIN)/pbmserv serve

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
