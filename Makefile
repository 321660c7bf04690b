# Two commands on a fresh machine: `make install`, then `make test` (everything; CI runs it). While editing, `make
# test-fast`: the notebooks' tests without their cells flagged `#| slow`, and the pytest tests that start no process.
# Everything runs in the project's virtual environment (.venv, made with PY, any Python 3.10+), so nothing is
# installed into the system Python.
PY ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
# Every recipe, and every process the tests start, finds the venv's python, nbdev_test and gaia-mas first.
export PATH := $(BIN):$(PATH)
export VIRTUAL_ENV := $(abspath $(VENV))
export OPIK_TRACK_DISABLE ?= true
# What the test targets run; e.g. make test NB_ARGS="--path nbs/gaia/28_cli.ipynb" PYTEST_ARGS="-q tests/gaia/test_cli.py"
# `make test` runs each notebook once: tools/docs.py --exec-only runs them as nbdev_test does (the `#| slow` cells too)
# and keeps the executed copies in _build/nbs/, from which tests/test_docs_site.py builds the docs site
NB_ARGS ?= --n_workers 2 --flags slow
# pytest on two workers (pytest-xdist): most tests wait on a process, a server or a timeout, so two overlap on two
# cores; each test file stays on one worker (--dist loadfile), so its module fixtures (a docs build, a server) run once
PYTEST_ARGS ?= -q --durations=30 -n 2 --dist loadfile tests
# The tests that start no process of any kind (the markers in pytest.ini; tests/conftest.py keeps them honest)
FAST := not (postgres or browser or real_server or process or subprocess or slow)
# the in-process tests in two workers (pytest-xdist): many of them wait (timeouts, retries, threads), and the two
# overlap; FAST_XDIST= runs them in one process
FAST_XDIST ?= -n 2

.PHONY: install system venv test test-fast test-nbs test-py lint docs docs-check readme notebooks bench check-venv

install: system venv  ## system tools (apt, when missing), then .venv with gaia_mas and its dev tools; fast when done

system:  ## chromium, tesseract, bubblewrap, node; @playwright/mcp and mermaid-cli into tools/mcp/node_modules
	PY=$(PY) bash tools/install_system.sh

venv:  ## .venv, and pip install -e ".[dev]" into it when settings.ini or setup.py changed
	PY=$(PY) VENV=$(VENV) bash tools/make_venv.sh

check-venv:
	@[ -x "$(BIN)/python" ] || { echo "no $(VENV) here: run make install first"; exit 1; }

test: check-venv  ## the notebooks' tests, then tests/: both always run; fails if either failed
	@status=0; \
	$(MAKE) --no-print-directory test-nbs || status=1; \
	$(MAKE) --no-print-directory test-py || status=1; \
	[ $$status -eq 0 ] && echo "make test: all passed" || echo "make test: FAILED (see above)"; \
	exit $$status

# The notebooks run beside pytest, not before it (each half waits on timeouts and loopback servers, so together they fill
# the two cores); their report follows pytest's, and they stop with it (Ctrl-C, or a failure of make)
test-fast: check-venv  ## the edit-test loop: the notebooks without their `#| slow` cells, the in-process pytest tests
	@status=0; nbs=$$(mktemp); trap 'rm -f $$nbs' EXIT; trap '[ -z "$$pid" ] || kill -- -$$pid; exit 130' INT TERM HUP; \
	setsid -w $(BIN)/nbdev_test --n_workers 2 >$$nbs 2>&1 & pid=$$!; \
	$(BIN)/python -m pytest -q $(FAST_XDIST) -m "$(FAST)" tests || status=1; \
	wait $$pid || status=1; pid=; echo "nbdev_test, the notebooks:"; cat $$nbs; \
	[ $$status -eq 0 ] && echo "make test-fast: all passed" || echo "make test-fast: FAILED (see above)"; \
	exit $$status

test-nbs: check-venv
	$(BIN)/python tools/docs.py --exec-only $(NB_ARGS)

test-py: check-venv
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: check-venv  ## the import layers (.importlinter), the types of the public API (mypy.ini), no name that hides a module-level one (pylint), tests/README.md, cell and module sizes
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/pylint --rcfile=.pylintrc gaia_mas
	$(BIN)/python tools/tests_map.py --check
	$(BIN)/python tools/cell_sizes.py --check

docs: check-venv  ## the docs site in _docs/: every notebook run, then nbdev_docs where Quarto is installed, else MkDocs
	$(BIN)/python tools/docs.py

docs-check: check-venv  ## the docs process without errors (nbdev_proc_nbs, with a no-op quarto)
	bash tools/check_docs.sh

readme: check-venv  ## README.md from nbs/index.ipynb
	$(BIN)/python tools/readme.py

notebooks: check-venv  ## execute every notebook in place, so outputs show in the docs
	$(BIN)/python tools/run_nbs.py

bench: check-venv  ## the benchmarks in bench/ (about an hour; each one also runs alone: python bench/NAME.py)
	$(BIN)/python bench/gaia_pdf_extractors.py
	$(BIN)/python bench/gaia_harness.py
	$(BIN)/python bench/gaia_sandbox.py
	$(BIN)/python bench/gaia_sandbox_attacks.py
	$(BIN)/python bench/rag_retrieval.py
	$(BIN)/python bench/rag_service.py
	$(BIN)/python bench/rag_kb_scale.py
	$(BIN)/python bench/rag_embedders.py
	$(BIN)/python bench/rag_real_corpus.py
	$(BIN)/python bench/rag_fusion.py
	$(BIN)/python bench/rag_reworded.py
	$(BIN)/python bench/rag_keyword.py
	$(BIN)/python bench/rag_openai.py
	$(BIN)/python bench/rag_burst.py
	$(BIN)/python bench/rag_burst_model.py
	$(BIN)/python bench/rag_burst_inproc.py
	$(BIN)/python bench/rag_cli_start.py
	@echo "before/after benches need a checkout of the older code: python bench/rag_load.py --ref DIR (also rag_sessions.py, rag_profile.py)"
