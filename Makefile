# spade — the two commands:
#   make round   one full self-play round on the embedded default model (fetches what it needs)
#   make test    the tests (sets up the Python environment and the model first)
#
# Everything a fresh machine lacks is installed by the targets below; nothing is assumed.

SHELL := /bin/bash
CARGO ?= cargo
PY ?= python3
VENV := .venv
PYTHON := $(abspath $(VENV)/bin/python)
PROFILE ?= release
BIN := target/$(PROFILE)
CARGO_FLAGS := $(if $(filter release,$(PROFILE)),--release,)

# Run knobs (recorded in the run's configuration).
RUN ?= default
SEED ?= 0
ROUND ?= 1
THREADS ?= 1
DEVICE ?= cpu
DOCS ?= 4
export SPADE_PYTHON := $(PYTHON)

.PHONY: all build test test-all bench venv round rounds report clean-runs help

all: build

help:
	@sed -n '1,6p' Makefile

## Python environment for table interop tests, peers and evaluation data.
venv: $(VENV)/.stamp
$(VENV)/.stamp: scripts/requirements.txt
	$(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r scripts/requirements.txt
	touch $@

build:
	$(CARGO) build $(CARGO_FLAGS) --workspace --bins

test: venv
	$(CARGO) test --workspace

## Slow tests too (ignored by default).
test-all: venv
	$(CARGO) test --workspace -- --include-ignored

bench: venv
	mkdir -p target/bench
	$(CARGO) bench --bench sample_corpus
	@echo "bench results in target/bench/*.json"

## One round on the embedded default. Stages that are not built yet stop it with a clear error.
RDIR := runs/$(RUN)/round-$(shell printf %04d $(ROUND))
round: build
	mkdir -p $(RDIR)
	$(BIN)/spade-sample-corpus data/corpus -o $(RDIR)/docs.parquet --n $(DOCS) --seed $(SEED) --round $(ROUND) --metrics runs/$(RUN)/metrics.jsonl
	$(BIN)/spade-design --docs $(RDIR)/docs.parquet -o $(RDIR)/candidates.parquet --seed $(SEED) --round $(ROUND) --threads $(THREADS) --device $(DEVICE) --metrics runs/$(RUN)/metrics.jsonl

clean-runs:
	rm -rf runs
