# Two entry points (see README): `make run` launches the studio, `make test` runs the whole suite.
# Both create .venv on first use and (re)install the pinned requirements when requirements.txt changes.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench fuzz venv clean

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) main.py $(ARGS)

# The suite runs in one xdist worker process (-n 1: still one test at a time). A test that hangs is ended by the
# time limits in pyproject.toml with every thread's stack printed; its worker is replaced and that test alone is
# run once more (--only-rerun matches only a crashed worker, never an ordinary failure).
test: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n 1 --reruns 1 --only-rerun "crashed while running" $(PYTEST_ARGS)

# ruff (pyflakes, import order, bugbear) over the tree and mypy over core/ and app/ (pyproject.toml); part of test.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

# Loader fuzzing (not part of `make test`, which runs a small fixed-seed slice): >= 10,000 mutated inputs per loader
# family, reproducers and report in fuzz-out/ (docs/fuzzing.md). E.g. make fuzz FUZZ_ARGS="--inputs 2000 --jobs 2".
fuzz: $(STAMP)
	$(PY) -m tools.fuzz $(FUZZ_ARGS)

bench: $(STAMP)
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache fuzz-out
