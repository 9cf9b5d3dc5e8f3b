# mlrepro: every target installs what it needs into .venv first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export DVC_NO_ANALYTICS := 1
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: install run test bench fuzz docs clean

install: $(VENV)/.installed

## install: exactly the lock (uv.lock, every package with its hashes) into .venv: uv,
## itself hash-pinned in requirements/uv.txt, is bootstrapped with the venv's pip, then
## `uv sync --locked` installs the lock and removes whatever it does not name (pip
## included); it refuses to run when uv.lock and pyproject.toml disagree
## (after a dependency change: uv lock, then make install; docs/maintainer.md)
$(VENV)/.installed: pyproject.toml uv.lock requirements/uv.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements/uv.txt
	UV_PROJECT_ENVIRONMENT=$(VENV) $(BIN)/uv sync --locked --extra test --quiet
	@touch $@

## run: the whole pipeline on the shipped submissions (dvc repro); a dvc.lock
## left unreadable by a killed run is first restored from git (bin/restore-lock,
## which then runs dvc repro in the same process); its last line says the pipeline's
## outcome apart from the data's (DVC's hints about a remote and git add dvc.lock dropped)
run: install
	@printf '%s\n' '' \
	  'outputs, by stage (dvc dag):' \
	  '  ingest   data/results.parquet            canonical table (accepted rows)' \
	  '           data/rejected.csv               rejected and set-aside rows, with reasons' \
	  '           data/findings.json              every finding' \
	  '           data/versions.csv               submission versions, used or superseded' \
	  '  compare  data/agreement.csv              partner rows against the reference (verdicts)' \
	  '           data/agreement_summary.json     agreement per partner' \
	  '           results/verified/               verified set: results.csv, agreement.csv' \
	  '           results/post_deadline/          post-deadline (unverified) set: results.csv, agreement.csv' \
	  '  audit    audit/validation.json           Great Expectations results (Data Docs: mlrepro audit, docs/auditor.md)' \
	  '  report   metrics.json, metrics/          counts and agreement rates (dvc metrics show)' \
	  '           audit/claims.json               the claims ledger (claims.yaml), recomputed' \
	  '           audit/scaling.json              multi-node scaling efficiencies' \
	  '           audit/crosscheck/<round>.json   verified results against the published tables' \
	  '           reports/index.html              the offline HTML report' \
	  '           reports/deviation.csv           the data of dvc plots show'
	$(BIN)/python bin/restore-lock dvc repro

## test: the whole test suite, on two cores (pytest-xdist): --dist loadfile sends each test
## file to whichever worker is free, so a module's fixtures (an ingest of the shipped
## submissions, a DVC project that has run) are built once; a folder many files read is
## built once per run (tests/conftest.py: shared). Files go out in collection order
## (--no-loadscope-reorder; xdist would otherwise send the files with fewest tests last,
## which are the long ones): tests/conftest.py puts the longest first, so the short ones
## fill in behind them and both workers finish together. Byte-code is cached even where the
## shell sets PYTHONDONTWRITEBYTECODE: every interpreter a test starts (dvc, the console
## script) would otherwise compile pandas, DVC and GX again, about twice their import time.
## (loadgroup would balance finer, but pytest-xdist 3.8 cannot tag node ids under pytest 9:
## its groups are silently ignored.)
test: install
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n 2 --dist loadfile --no-loadscope-reorder

## docs: the generated reference pages (docs/cli.md, docs/findings.md) from the code
docs: install
	$(BIN)/python bin/write-docs

## fuzz: the parser fuzzers at length (hypothesis profile "fuzz": 5000 examples each)
fuzz: install
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q tests/test_fuzz.py

## bench: the speed goals (each ratio against its floor, measured in the same run); figures to
## benchmarks/results.json and docs/benchmarks.md (MLREPRO_BENCH_QUICK=1: small inputs,
## few runs, written to a temporary file)
bench: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf data results .cache .pytest_cache
