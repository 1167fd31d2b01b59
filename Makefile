# Two entry points for a fresh machine:
#   make demo   installs dndask and runs the seed tour on the embedded 4-worker cluster
#   make test   installs the test extras and runs lint, doctests and the whole test suite
# and one for CI, against releases newer than pyproject's pin (docs/dask-versions.md):
#   make test-dask-next   the placement and bytes-moved tests on the newest dask and distributed
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The CPU build of torch: a plain `torch` requirement would pull a multi-GB CUDA build.
TORCH ?= torch==2.13.0

.PHONY: demo test test-fast lint doctest pytest clean gpu-wheels

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

# Two pytest-xdist processes, each with its own 5-worker session cluster: the suite waits on
# scheduler round trips more than it computes, so two of them fill two cores (tests/conftest.py
# keeps each file in one process, in order). PYTEST_PROCS=0 runs everything in this process.
PYTEST_PROCS ?= 2
pytest: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider --durations=30 \
		$(if $(filter 0,$(PYTEST_PROCS)),,-n $(PYTEST_PROCS) --dist loadgroup)

test: lint doctest pytest

# The multi-node tests alone: simulated nodes in network namespaces (tests/multinode, needs root
# and iproute2; elsewhere they skip and say why). `make pytest` collects them too.
.PHONY: test-multinode
test-multinode: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider -rs tests/multinode

# The edit loop: lint, the pure planning tests, the import/compat seams, every bad input,
# and the core array tests on the shared cluster; no slow, MPI or notebook tests.
FAST_TESTS ?= tests/test_layout.py tests/test_layout_manipulation.py tests/test_imports.py \
	tests/test_compat.py tests/test_bad_inputs.py tests/test_dndarray.py
test-fast: lint
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow and not mpi" $(FAST_TESTS)

clean:
	rm -rf $(VENV) $(DASK_NEXT_VENV) .pytest_cache .ruff_cache

# The wheels the GPU machine lacks (Python 3.12, no network there), at the versions of this
# venv, into the ignored .whl/ (docs/gpu.md has the one command that installs and runs them).
GPU_WHEELS ?= .whl
GPU_PACKAGES ?= dask distributed tornado zict tblib partd locket mpich mpi4py
gpu-wheels: $(VENV)/.installed
	mkdir -p $(GPU_WHEELS)
	$(PY) -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
		--implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
		--platform manylinux2014_x86_64 -d $(GPU_WHEELS) $$($(PY) -c "import importlib.metadata \
		as m; print(' '.join(p + '==' + m.version(p) for p in '$(GPU_PACKAGES)'.split()))")
	ls -l $(GPU_WHEELS)

# dndask, dask and Heat (installed in bench/.heat-venv on first use) side by side;
# writes docs/performance.md and its plot. BENCH_ARGS=--quick is a smoke run.
BENCH_ARGS ?= --out
.PHONY: bench bench-algorithms
bench: $(VENV)/.installed
	$(PY) -m bench $(BENCH_ARGS)

# Issues 27 and 28 (cdist, k-means, Lasso, moments, eigh, polar, rsvd, IncrementalPCA, fft):
# replaces only the algorithms section of docs/performance.md. Dask-ml, where installed in
# bench/.dask-ml-site (see bench/algorithms.py), fills the Dask column of k-means and PCA.
bench-algorithms: $(VENV)/.installed
	PYTHONPATH=.:bench/.dask-ml-site $(PY) -m bench --group algorithms --repeats 2 --out

# The placement and bytes-moved tests against the NEWEST dask and distributed, ignoring the
# pin in pyproject.toml (see docs/dask-versions.md), in a venv of their own; then, with dask's
# `array.query-planning` on, the same tests again: all must pass in both modes (with query
# planning on, a failure in the first run does not skip the second). DASK_NEXT picks other
# releases, e.g.
# DASK_NEXT="dask[array]==2025.1.0 distributed==2025.1.0" checks the lower bound.
# Empty: the newest dask and distributed released together, found by .ci/dask_next.py, which
# also says plainly when the newest dask has no distributed it imports with.
DASK_NEXT ?=
DASK_NEXT_VENV ?= .venv-dask-next
DASK_NEXT_PY := $(DASK_NEXT_VENV)/bin/python
DASK_NEXT_FILES ?= tests/test_compat.py tests/test_distribution.py tests/test_per_rank.py
DASK_NEXT_MOVES ?= tests/test_indexing.py tests/test_linalg.py tests/test_manipulation.py
DASK_NEXT_K ?= moves or traffic or sends or places
DASK_NEXT_PYTEST = PYTHONPATH=$(CURDIR) DNDASK_PROGRESS=off $(DASK_NEXT_PY) -m pytest -q \
	-p no:cacheprovider
.PHONY: test-dask-next
test-dask-next:
	test -x $(DASK_NEXT_PY) || $(PYTHON) -m venv $(DASK_NEXT_VENV)
	$(DASK_NEXT_PY) -m pip install --quiet --upgrade pip
	$(DASK_NEXT_PY) -m pip install --quiet "$(TORCH)" numpy pytest pytest-timeout hypothesis
	$(if $(DASK_NEXT),$(DASK_NEXT_PY) -m pip install --quiet --upgrade $(DASK_NEXT),\
		$(PYTHON) .ci/dask_next.py $(DASK_NEXT_PY))
	@$(DASK_NEXT_PY) -c "import dask, distributed; print('dask-next: testing dask', \
		dask.__version__, 'with distributed', distributed.__version__)" || { \
		echo "dask-next: the dask and distributed installed in $(DASK_NEXT_VENV) do not import" \
		"together ($(or $(DASK_NEXT),see the lines above)); docs/dask-versions.md"; exit 1; }
	$(DASK_NEXT_PYTEST) $(DASK_NEXT_FILES)
	$(DASK_NEXT_PYTEST) $(DASK_NEXT_MOVES) -k "$(DASK_NEXT_K)"
	@echo "dask-next: the same with query planning on (dask's expression arrays)"
	@rm -f $(DASK_NEXT_VENV)/.query-planning-seams-moved
	DASK_ARRAY__QUERY_PLANNING=True $(DASK_NEXT_PYTEST) $(DASK_NEXT_FILES) || \
		touch $(DASK_NEXT_VENV)/.query-planning-seams-moved
	DASK_ARRAY__QUERY_PLANNING=True $(DASK_NEXT_PYTEST) $(DASK_NEXT_MOVES) -k "$(DASK_NEXT_K)" || \
		touch $(DASK_NEXT_VENV)/.query-planning-seams-moved
	@test ! -e $(DASK_NEXT_VENV)/.query-planning-seams-moved || { echo "dask-next: FAILED:" \
		"with query planning on, the tests above fail: adapt dndask/_compat.py"; \
		exit 1; }
