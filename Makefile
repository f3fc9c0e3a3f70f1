# attnlab: `make run` walks the lesson; `make test` runs lint and the fast tier (every test that
# stays in one process), `make check` lint and every test (what CI runs). All set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test check lint bench serve notebook clean

# Reinstall only when the project's install files change. Then build the web lesson's Chinese
# font subset from the Noto Sans CJK that mplfonts ships, and what a learner's first command
# would otherwise build (benchmarks/first_run.py): attnlab's bytecode, and the web lesson's
# figures, which also builds matplotlib's font list and loads the CJK font.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,class]'
	$(PY) -m compileall -q src/attnlab
	$(PY) tools/build_fonts.py --cjk
	$(PY) -m attnlab.web.figures
	@touch $(STAMP)

run: $(STAMP)
	$(PY) week07_attention.py

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy src/attnlab

# The tiers are tests/tiers.py's: --tier fast leaves out the tests marked browser, sandbox,
# process, pg or release (they need Chromium, bubblewrap, PostgreSQL, other processes).
# Tests keep their bytecode (pytest's rewritten test modules) from run to run, even where the
# environment says PYTHONDONTWRITEBYTECODE: it saves each worker seconds of collection.
# worksteal: a worker that runs out of tests takes some of the other's.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n 2 --dist worksteal --timeout=300
test: lint
	$(PYTEST) --tier fast

check: lint
	$(PYTEST) --tier full

bench: $(STAMP)
	$(VENV)/bin/attnlab bench

serve: $(STAMP)
	$(VENV)/bin/attnlab serve

# The lesson as a notebook, opened in JupyterLab (installed into .venv with the notebook extra).
notebook: $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,class,notebook]'
	$(VENV)/bin/attnlab notebook
	$(VENV)/bin/jupyter lab week07-attention.ipynb

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
