# The two commands of the README:
#   make demo   set everything up, then run the main job on the embedded default (offline, no API key)
#   make test   set everything up, then run the tests (.ci/run calls exactly this)
VENV ?= .venv
PY := $(VENV)/bin/python
# Slow tests (real models, soak) run in CI (CI=true) and with `make test-all`; CI's log ends with the 40 slowest
# tests, so the next place to make the suite faster is read off the run itself.
PYTEST_FLAGS ?= $(if $(filter true 1,$(CI)),--run-slow --durations=40,)

.PHONY: setup demo test test-all bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m evolvecoder_datasets.cli demo

test: setup
	$(PY) -m pytest $(PYTEST_FLAGS)

test-all: setup
	$(PY) -m pytest --run-slow

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info demo-output
