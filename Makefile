# Two set-up commands on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs every package at the version pinned in requirements/lock.txt
# (`make lock` regenerates it from pyproject.toml); a re-run with nothing changed reinstalls nothing.
# The installer is uv (the one on PATH, else pip installs it into .venv); plain pip is the
# fallback when uv cannot be had or fails.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
LOCK := requirements/lock.txt
# the Python and platform the lock is resolved for: that of these machines
LOCK_PYTHON := 3.11
LOCK_PLATFORM := x86_64-unknown-linux-gnu
# `make lock LOCKFLAGS=--upgrade` moves every pin to the newest allowed version
LOCKFLAGS ?=
SANDBOX_DB ?= out/sandbox.db
SANDBOX_SEED ?= sample_data
# test processes (pytest-xdist; a file's tests stay in one process, notebooks' cells in order)
TEST_WORKERS ?= 2

# `uv pip sync` makes .venv exactly the lock plus the project ("-e ." read from stdin), with no
# dependency of the project's own beyond the lock, as `pip install --no-deps -e .` does.
# The venv is made without pip (ensurepip takes seconds); pip is added only for the fallback.
ENSURE_PIP = { $(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip >/dev/null; }
# Shell fragment: sets $uv to a working uv (PATH's, else one that pip puts into .venv: the
# outer Python's pip, pip >= 22.3, targets the venv; else the venv's own pip), or to ''.
FIND_UV = uv=$$(command -v uv || true); \
	if [ -z "$$uv" ]; then uv=$(VENV)/bin/uv; [ -x "$$uv" ] \
	  || $(PYTHON) -m pip --python $(PY) install -q uv 2>/dev/null \
	  || { $(ENSURE_PIP) && $(PY) -m pip install -q uv; } || uv=; fi; \
	if [ -n "$$uv" ] && ! "$$uv" --version >/dev/null 2>&1; then uv=; fi

.PHONY: install lock demo test lint lab sandbox bench clean firms-demo docs dist

$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	@$(FIND_UV); \
	if [ -n "$$uv" ] && echo "installing $(LOCK) and the project (editable) with $$uv" \
	    && echo "-e ." | "$$uv" pip sync -q --python $(PY) $(LOCK) -; then :; \
	else \
	  echo "uv unavailable or failed: installing $(LOCK) with pip"; \
	  $(ENSURE_PIP) && $(PY) -m pip install -q -r $(LOCK) && $(PY) -m pip install -q --no-deps -e . || exit 1; \
	fi
	touch $(STAMP)

install: $(STAMP)

lock:
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	@$(FIND_UV); test -n "$$uv" || { echo "make lock needs uv (pip install uv)"; exit 1; }; \
	mkdir -p $(dir $(LOCK)); \
	"$$uv" pip compile -q pyproject.toml --all-extras --python-version $(LOCK_PYTHON) \
	  --python-platform $(LOCK_PLATFORM) --custom-compile-command "make lock" $(LOCKFLAGS) \
	  -o $(LOCK)

# writes out/export, out/hours_by_client.png and a new out/sandbox.db (an existing one is moved
# to out/sandbox.<when it was last written>.db, such as out/sandbox.20261206T051500Z.db, and
# none is ever replaced); refuses, changing nothing, while a sandbox serves out/sandbox.db
demo: $(STAMP)
	$(PY) -m toolkit demo --out out

test: $(STAMP)
	$(PY) -m ruff format --check toolkit tests bench
	$(PY) -m ruff check toolkit tests bench
	$(PY) -m mypy toolkit tests/typed_uses.py
	TOOLKIT_NOTEBOOK_SANDBOX=1 $(PY) -m pytest tests toolkit bench notebooks --doctest-modules --nbval-lax --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider \
	  -n $(TEST_WORKERS) --dist loadfile --durations=15

lint: $(STAMP)
	$(PY) -m ruff format --check toolkit tests bench
	$(PY) -m ruff check toolkit tests bench
	$(PY) -m mypy toolkit tests/typed_uses.py

lab: $(STAMP)
	$(PY) -m toolkit lab

# serves $(SANDBOX_DB) (what `make demo` left, or a new one seeded with sample_data)
sandbox: $(STAMP)
	mkdir -p $(dir $(SANDBOX_DB))
	@echo "make sandbox: serves $(SANDBOX_DB) on http://127.0.0.1:8765 until Ctrl+C, after loading"
	@echo "  the CSV files of $(SANDBOX_SEED)/ into it through the import rules (upserts; entries are"
	@echo "  made only when it has none). Seed another firm: make sandbox SANDBOX_SEED=DIR;"
	@echo "  another database: make sandbox SANDBOX_DB=FILE; start afresh: rm $(SANDBOX_DB) first."
	$(PY) -m toolkit sandbox --seed $(SANDBOX_SEED) --db $(SANDBOX_DB)

# three firms as three sandbox customers (out/firms-demo/firms.toml, .env), then `dagster dev`
# on http://127.0.0.1:3000 (examples/dagster/README.md)
firms-demo: $(STAMP)
	$(PY) examples/dagster/firms_demo.py --out out/firms-demo

# the documentation site (MkDocs, Material, mkdocstrings, mkdocs-jupyter) into site/, with
# --strict; the notebooks are run against a sandbox of their own while it builds
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DOCS_EXECUTE=true TOOLKIT_NOTEBOOK_SANDBOX=1 $(PY) -m mkdocs build --strict -d site

# the wheel and the sdist in dist/ (uv build; the wheel carries the sample firm, so that
# `pip install 'dist/timebill_toolkit-0.1.0-py3-none-any.whl[sandbox]'` runs `toolkit demo`)
dist: $(STAMP)
	@$(FIND_UV); test -n "$$uv" || { echo "make dist needs uv (pip install uv)"; exit 1; }; \
	rm -rf dist && "$$uv" build -q --out-dir dist . && ls dist

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf out site .cache .pytest_cache .mypy_cache
