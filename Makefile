# Two set-up commands on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what it needs; a re-run with nothing changed reinstalls nothing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo test lint lab sandbox bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m toolkit demo --out out

test: $(STAMP)
	$(PY) -m ruff check toolkit tests bench
	$(PY) -m pytest tests toolkit notebooks --doctest-modules --nbval-lax --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider

lint: $(STAMP)
	$(PY) -m ruff check toolkit tests bench

lab: $(STAMP)
	$(PY) -m toolkit lab

# serves out/sandbox.db (what `make demo` left, or a new one seeded with sample_data)
sandbox: $(STAMP)
	mkdir -p out
	$(PY) -m toolkit sandbox --seed sample_data --db out/sandbox.db

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf out .pytest_cache
