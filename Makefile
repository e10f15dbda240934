PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
PORT ?= 8501
ADDRESS ?= 127.0.0.1

.PHONY: run test lint bench demo clean peers-venv

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[app]"
	$(PY) -m metrics_core.compiled  # compile the numba loops once (CONTRIBUTING.md)
	touch $@

$(STAMP_TEST): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[app,test,peers,spark,mlflow,postgresql]"
	$(PY) -m metrics_core.compiled
	touch $@ $(STAMP_RUN)

# streamlit run dashboard/app.py, with the code every session needs loaded first (dashboard/serve.py);
# two heap arenas: memory a closed session freed goes back to the system (docs/app.md)
run: $(STAMP_RUN)
	MALLOC_ARENA_MAX=2 $(PY) -m dashboard.serve --server.port $(PORT) --server.address $(ADDRESS)

test: $(STAMP_TEST)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -n auto --maxprocesses 4 --dist worksteal  # (one process per core, at most 4)

# The peers the rectools/recommenders/torchmetrics presets are checked against (numpy < 2,
# pandas < 3: their own environment). Tests that need it skip when it is absent.
peers-venv: .venv-peers/.installed
.venv-peers/.installed: tests/peers/requirements.txt
	$(PYTHON) -m venv .venv-peers
	.venv-peers/bin/python -m pip install --quiet --upgrade pip
	.venv-peers/bin/python -m pip install --quiet -r tests/peers/requirements.txt
	touch $@

lint: $(STAMP_TEST)
	$(VENV)/bin/ruff check .

demo: $(STAMP_RUN)
	$(PY) -m dashboard.demo data

# make bench BENCH_DATA="/tmp/syn100k /tmp/syn1m"  (directories written by make_synthetic.py)
bench: $(STAMP_TEST)
	$(PY) bench/run.py $(foreach d,$(BENCH_DATA),--data $(d)) --peers-python $(PY)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
