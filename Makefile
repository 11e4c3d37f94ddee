# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $(STAMP)

demo: $(STAMP)
	$(PY) -m versioned.demo

test: $(STAMP)
	$(VENV)/bin/ruff check versioned tests benchmarks
	$(VENV)/bin/mypy
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check versioned tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m benchmarks.upsert

clean:
	rm -rf $(VENV) warehouse .pytest_cache .mypy_cache .ruff_cache
