# gpucomm: build the course and run the checks.
#
#   make book    set up .venv, fetch the offline JavaScript, build the book into _build/html
#                (every page executed; any cell error or Sphinx warning fails the build)
#   make test    set up .venv, lint (ruff), rebuild the book if a source changed since the last
#                good build, then run the whole suite: tests/ (unit, widgets, book, browser),
#                doctests of src/gpucomm, nbval on notebooks/ and labs/, on one worker per core
#   make test-fast  lint, then every test that starts no process, no process group, no book build and no
#                browser (-m "not procs and not slow", marked by tests/conftest.py), and the model's
#                doctests: under a minute; run it often
#   make lint    ruff (lint + import order, configured in pyproject.toml)
#   make gpu-check  on a node with a CUDA GPU: every CUDA-path test, the labs with NCCL, gpucomm copybw and
#                gpucomm doctor (report in GPU_CHECK_OUT); without a GPU it says so in one line and fails
#   make env     only the virtualenv;  make assets  only assets/vendor/;  make clean  _build/
#
# Needs python3.11 (PYTHON=...), npm (once, to fetch MathJax, require.js and the ipywidgets
# embedder) and, for the browser tests, Debian's `chromium` (.ci/run installs it).

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := book
.DELETE_ON_ERROR:

PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Extra pip arguments for the CPU torch, e.g. --index-url https://download.pytorch.org/whl/cpu
TORCH_PIP_ARGS ?=
# Strict by default: every page re-read and executed (--all), warnings are errors.
# `make book BOOK_FLAGS=` for a quick incremental, lenient build.
STRICT_BOOK_FLAGS := --all -W --keep-going
BOOK_FLAGS ?= $(STRICT_BOOK_FLAGS)

ENV_STAMP := $(VENV)/.gpucomm-env
BOOK_STAMP := _build/html/.gpucomm-strict-build
# What the built pages depend on: a change in any of these makes `make test` rebuild the book.
BOOK_SOURCES := _config.yml _toc.yml scripts/fetch_assets.sh \
  $(shell find book notebooks labs src/gpucomm -type f \( -name '*.md' -o -name '*.ipynb' -o -name '*.py' \
          -o -name '*.js' -o -name '*.css' \) \
          -not -path '*/.ipynb_checkpoints/*' -not -path '*/__pycache__/*' 2>/dev/null)
# The venv's bin first: notebooks executed by the build and by nbval use its python.
RUN := PATH="$(abspath $(BIN)):$$PATH"

.PHONY: book test test-fast lint env assets clean gpu-check

env: $(ENV_STAMP)

# Idempotent and fast once done: reruns only when a requirements file or pyproject.toml changes.
# torch goes in first, alone, so nothing later resolves `torch` to a CUDA build; a torch already
# in the venv (a GPU node's CUDA build) is kept.
$(ENV_STAMP): requirements.txt requirements-cpu.txt pyproject.toml
	@test -x $(PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@if $(PY) -c 'import torch' 2>/dev/null; then \
	  echo "keeping the installed torch $$($(PY) -c 'import torch; print(torch.__version__)')"; \
	else \
	  $(PY) -m pip install $(TORCH_PIP_ARGS) -r requirements-cpu.txt; \
	fi
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install -e .
	@touch $@

assets: env
	PYTHON=$(PY) scripts/fetch_assets.sh

define build_book
	PYTHON=$(PY) scripts/fetch_assets.sh
	rm -f $(BOOK_STAMP)
	$(RUN) $(BIN)/jupyter-book build . --builder html $(BOOK_FLAGS)
	@if [ "$(BOOK_FLAGS)" = "$(STRICT_BOOK_FLAGS)" ]; then touch $(BOOK_STAMP); fi
endef

book: env
	$(build_book)

# For `make test`: rebuild only when a source changed since the last strict build.
$(BOOK_STAMP): $(ENV_STAMP) $(BOOK_SOURCES)
	$(build_book)

# GPUCOMM_BOOK_BUILT=1: the book was just built (strictly) above, so tests/book/test_book.py does not
# build it a second time. Doctests skip the modules that import torch when torch is missing.
# The fast tier: every test that starts no process (tests/conftest.py marks the others `procs`) and
# builds no book and drives no browser (`slow`), with hypothesis's `fast` profile. Both tiers print
# their 15 slowest tests.
PYTEST_FLAGS := --durations=15
# `make test` spreads the test files over workers (pytest-xdist; a file stays on one worker, so its module and
# session fixtures, a notebook's cells and a browser module's pages run together, in order). Three workers even on
# 2 cores: the suite waits on browsers, kernels and ranks much of the time. On the 2-core VM, book built, quiet:
# 4 workers 358 s of pytest (the cores oversubscribed: load 5-7), 3 workers 323 s (2 workers, earlier code: 483 s).
# PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 3
XDIST_FLAGS := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)

lint: env
	$(BIN)/ruff check .

test-fast: lint
	HYPOTHESIS_PROFILE=fast $(RUN) $(PY) -m pytest -q $(PYTEST_FLAGS) -m "not procs and not slow" \
	  tests src/gpucomm/model --doctest-modules

test: lint $(BOOK_STAMP)
	@$(PY) -c 'import playwright.sync_api' 2>/dev/null || $(PY) -m pip install "$$(grep -E '^playwright==' requirements.txt)"
	@ignore=""; \
	if ! $(PY) -c 'import torch' 2>/dev/null; then \
	  for f in $$(grep -rlE '^(import|from) torch' src/gpucomm || true); do ignore="$$ignore --ignore=$$f"; done; \
	  echo "torch is not installed: no doctests for$$ignore"; \
	fi; \
	set -x; \
	GPUCOMM_BOOK_BUILT=1 HYPOTHESIS_PROFILE=full $(RUN) $(PY) -m pytest $(PYTEST_FLAGS) $(XDIST_FLAGS) tests notebooks labs src/gpucomm \
	  --doctest-modules $$ignore \
	  --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg

# The CUDA paths, on a GPU node (under 8 minutes on one GPU): the tests marked gpu, the test files whose CUDA tests
# skip without a GPU (-rs lists any that still skipped), the labs that measure (run with NCCL; nbval-lax: outputs
# recorded on a CPU are not compared), copy bandwidth, and the doctor. The doctor's exit status 1 (it ran and found
# something below expected or a pathology: see its summary and GPU_CHECK_OUT/report.html) does not fail the target.
GPU_CHECK_OUT ?= /tmp/gpucomm-gpu-check
GPU_TESTS := tests/measure/test_doctor.py tests/cli/test_doctor_verb.py tests/measure/test_copy_bandwidth.py \
  tests/measure/test_runner.py tests/measure/test_collectives_bench.py tests/measure/test_tp_layer.py
GPU_LABS := labs/allreduce_sweep.ipynb labs/collectives.ipynb labs/copy_bandwidth.ipynb labs/tp_layer.ipynb \
  labs/topology.ipynb

gpu-check:
	@$(PY) -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null || \
	  { echo "make gpu-check: no CUDA GPU here (torch.cuda.is_available() is False in $(PY), or no torch: make env)"; exit 1; }
	mkdir -p $(GPU_CHECK_OUT)
	$(RUN) $(PY) -m pytest -q -rs -m gpu tests
	$(RUN) $(PY) -m pytest -q -rs -m "not gpu" $(GPU_TESTS) --nbval-lax $(GPU_LABS)
	$(RUN) $(BIN)/gpucomm copybw -e 256MiB --out $(GPU_CHECK_OUT)/copybw.jsonl --force
	$(RUN) $(BIN)/gpucomm doctor --out-dir $(GPU_CHECK_OUT) --force || test $$? -eq 1

clean:
	rm -rf _build
