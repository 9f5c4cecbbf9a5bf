# One-command set-up: `make demo` runs an offline evaluation, `make test` the test suite.
# Both create .venv and install everything (torch's CPU pin first: see README, Installing).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE ?= 1

.PHONY: install demo test lint format bench clean

$(STAMP): pyproject.toml tests/plugin_example/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]" -e tests/plugin_example
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/audiobench evaluate --task SyntheticVocalisations --model log-mel --overwrite

test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	bash scripts/install-chromium.sh
	$(BIN)/python -m pytest -n 2 -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/vocsim_metrics.py
	$(BIN)/python benchmarks/vocsim_metrics.py --n 3000 --classes 10
	$(BIN)/python benchmarks/vocsim_metrics.py --n 3000 --classes 10 --raw-dim 18304
	$(BIN)/python benchmarks/probes.py
	$(BIN)/python benchmarks/encoder_throughput.py --size tiny --clips 32
	$(BIN)/python benchmarks/ray_throughput.py

clean:
	rm -rf $(VENV) results .pytest_cache .ruff_cache
