# Two entry points for a fresh machine:
#   make demo   installs dndask and runs the seed tour on the embedded 4-worker cluster
#   make test   installs the test extras and runs lint, doctests and the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The CPU build of torch: a plain `torch` requirement would pull a multi-GB CUDA build.
TORCH ?= torch==2.13.0

.PHONY: demo test lint doctest pytest clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e ".[test,xarray]"
	touch $@

demo: $(VENV)/.installed
	DNDASK_WORKERS=$${DNDASK_WORKERS:-4} $(PY) examples/internals.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check dndask tests examples bench
	$(VENV)/bin/ruff format --check dndask tests examples bench

doctest: $(VENV)/.installed
	DNDASK_WORKERS=4 DNDASK_PROGRESS=off $(PY) -m pytest --doctest-modules dndask -q -p no:cacheprovider

pytest: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider

test: lint doctest pytest

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# dndask, dask and Heat (installed in bench/.heat-venv on first use) side by side;
# writes docs/performance.md and its plot. BENCH_ARGS=--quick is a smoke run.
BENCH_ARGS ?= --out
.PHONY: bench
bench: $(VENV)/.installed
	$(PY) -m bench $(BENCH_ARGS)
