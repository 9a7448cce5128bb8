#!/usr/bin/env bash
# Submit one spade round to Slurm and wait for it. The round is `make round`'s: every job runs the
# Makefile's own recipe for a target of the round (scripts/slurm/job.sh: `make TARGET RUNS=… RUN=…
# ROUND=… SHARDS=N NO_BUILD=1` plus the knobs), so stages, flags, defaults and knobs cannot differ from
# `make round`, and a finished stage is never recomputed (run round.sh again to resume a failed round).
# The generation-heavy parts are array jobs over `--shard I/N` (I = $SLURM_ARRAY_TASK_ID, SHARDS
# tasks), each writing one shard file that the next stage reads, with the others, as one table.
# The jobs, each after the one before:
#   spade-prepare       make step-0-inputs: the starting memory (round 1), documents, design, validation
#   spade-rollout-sS    array: make RDIR/step-S/rollouts.parquet/shard-I.parquet, for each step S
#   spade-train-sS      make step-(S+1)-inputs, or RDIR/memory.parquet after the last step: regret and
#                       the GRPO step of step S (the designer too where make round trains it)
#   spade-eval          array: make RDIR/eval.parquet/shard-I.parquet (when make round evaluates: EVAL_EVERY)
#   spade-round         make round: nothing left to run but the report (RUNDIR/report.html)
# Job logs: RDIR/slurm/. Jobs run on whichever node Slurm picks: the repository (binaries, models/,
# .venv) and RUNDIR must be on a shared filesystem.
#
#   scripts/slurm/round.sh RUNDIR ROUND [VAR=value ...]
#
# RUNDIR (relative to the current directory) gives RUNS (its parent) and RUN (its name); ROUND is the
# round. Knobs: all of the Makefile's, as environment variables or VAR=value arguments, with its defaults,
# exactly as `make round` takes them (the jobs run make in the submitting environment with the arguments):
# SIZE, STEPS, DELAY, SETTINGS, TOOL_SEEDS, POOL, EVAL_EVERY, EVAL_SUITES, EVAL_N, EVAL_SAMPLES, EVAL_TEMPERATURE, SEED,
# TEMPERATURE, DESIGN_TEMPERATURE, LR, SEED_PLAYS, THREADS, DEVICE, FEATURES, MODEL, START, WARM,
# FIXED_POOL, FIXED_POOL_SIZE, MATCH_RUN, FROZEN_DESIGNER, NO_MEMORY, NO_CORPUS, VARIANT, CORPUS, SEEDS,
# CANDIDATES, SAMPLE_FLAGS, DESIGN_FLAGS, VALIDATE_FLAGS, ROLLOUT_FLAGS, REGRET_FLAGS, GRPO_FLAGS,
# EVAL_FLAGS, the stage programs (SAMPLE_CORPUS, DESIGN, VALIDATE, ROLLOUT, REGRET, GRPO_STEP, EVAL),
# NO_BUILD, PROFILE and BIN; relative paths are relative to the repository, as for make. Before it
# submits, round.sh makes here what `make round` makes first (`make round-deps`: the release build with
# FEATURES unless NO_BUILD=1, the Python environment, the default model); the jobs never build.
# Slurm: SHARDS [4] (array tasks for rollout and eval), SBATCH_ARGS (extra sbatch flags for every job,
# e.g. "--partition gpu --gres gpu:1").
# Generation through an inference server (multi-node): SERVER_ENGINE (vllm | sglang | llama; unset = the
# stages generate with the embedded model) submits scripts/slurm/serve.sh as a job of its own for each
# step, on the model that step generates with (the round's starting model, then the previous step's
# checkpoint: that is the weight hand-off), with SERVER_SBATCH_ARGS (e.g. "--partition gpu --gres gpu:8")
# and SERVER_ENGINE_ARGS (its extra flags). Design and the step's rollout array wait for the address it
# publishes in RDIR/server/step-S.url and generate through it (SPADE_SERVER, i.e. `--server`); it is
# cancelled once the step's rollouts are done. A server reports log-probs at temperature 1, so
# TEMPERATURE (and DESIGN_TEMPERATURE, where the round designs) must be 1 or 0. llama-server serves
# .gguf files: serve.sh converts each checkpoint with llama.cpp's converter (scripts/to-gguf.sh,
# GGUF_TYPE [f16]) before serving it. Eval (on the trained checkpoint) runs embedded.
set -euo pipefail
usage="usage: scripts/slurm/round.sh RUNDIR ROUND [VAR=value ...]"
[[ $# -ge 2 ]] || { echo "$usage" >&2; exit 2; }
rundir="$1" round="$2"
shift 2
[[ "$round" =~ ^[1-9][0-9]*$ ]] || { echo "round.sh: ROUND \`$round': expected a round number from 1" >&2; exit 2; }
shards="${SHARDS:-4}"
knobs=()
for a in "$@"; do
  [[ "$a" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "round.sh: \`$a': expected VAR=value (a knob of make round); $usage" >&2; exit 2; }
  case "${a%%=*}" in
    RUN | RUNS | ROUND) echo "round.sh: \`$a': RUNDIR and ROUND give RUNS, RUN and ROUND" >&2; exit 2 ;;
    SHARDS) shards="${a#*=}" ;;
    *) knobs+=("$a") ;;
  esac
done
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "round.sh: SHARDS \`$shards': expected a number of array tasks, at least 1" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$rundir"
rundir="$(cd "$rundir" && pwd)"
cd "$root"
# make reads BIN from its command line only (the Makefile sets it from PROFILE).
[[ -n "${BIN:-}" ]] && knobs=("BIN=$BIN" "${knobs[@]}")
# round.sh is the top of the make calls: nothing of a make that ran it carries over.
unset MAKEFLAGS MFLAGS MAKELEVEL
args=("RUNS=$(dirname "$rundir")" "RUN=$(basename "$rundir")" "ROUND=$round" "SHARDS=$shards" "${knobs[@]}")

# The plan as the Makefile resolves it.
plan="$(make -s --no-print-directory print-RDIR print-STEPS print-START_MODEL print-TEMPERATURE \
  print-DESIGN_TEMPERATURE print-FIXED_POOL print-CANDIDATES print-DO_EVAL print-EVAL_OUT "${args[@]}" NO_BUILD=1)"
mapfile -t v <<<"$plan"
rdir="${v[0]}" steps="${v[1]:-}" start_model="${v[2]:-}" temperature="${v[3]:-}" design_temperature="${v[4]:-}"
fixed_pool="${v[5]:-}" candidates="${v[6]:-}" do_eval="${v[7]:-}"
# The round's outputs (make round's sub-make targets).
read -r -a outputs <<<"$rdir/memory.parquet ${do_eval:+${v[8]:-}}"
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || { echo "round.sh: STEPS \`$steps': expected a number of agent steps, at least 1" >&2; exit 2; }
designs=""
[[ -z "$fixed_pool" && -z "$candidates" ]] && designs=1
# The jobs never build.
jargs=("${args[@]}" NO_BUILD=1)

if [[ -n "${SERVER_ENGINE:-}" ]]; then
  unit() { awk -v t="$1" 'BEGIN { exit !(t == 0 || t == 1) }'; }
  case "$SERVER_ENGINE" in vllm | sglang | llama) ;; *) echo "round.sh: SERVER_ENGINE \`$SERVER_ENGINE': expected vllm, sglang or llama" >&2; exit 2 ;; esac
  unit "$temperature" || { echo "round.sh: TEMPERATURE $temperature: a server generates at temperature 1 or 0 only" >&2; exit 2; }
  if [[ -n "$designs" ]] && ! unit "$design_temperature"; then
    echo "round.sh: DESIGN_TEMPERATURE $design_temperature: a server generates at temperature 1 or 0 only" >&2
    exit 2
  fi
fi

# What make round makes before its stages (the build, the Python environment, the default model), here.
make -s --no-print-directory round-deps "${args[@]}" >&2
# The serve jobs convert checkpoints for llama-server in the PyTorch environment: made here, once.
[[ "${SERVER_ENGINE:-}" == llama && -z "${SPADE_TORCH_PYTHON:-}" ]] && scripts/torch-venv.sh >/dev/null
echo "run $(basename "$rundir") round $round starts from $start_model; $shards shards; job logs in $rdir/slurm/" >&2
mkdir -p "$rdir/slurm"
read -r -a sbatch_args <<<"${SBATCH_ARGS:-}"
read -r -a server_sbatch_args <<<"${SERVER_SBATCH_ARGS:-}"
jobs=()
servers=()
# On failure or interruption, cancel what was submitted (finished jobs are not affected); the servers always.
finish() {
  local rc=$? j
  local cancel=("${servers[@]}")
  ((rc == 0)) || cancel+=("${jobs[@]}")
  for j in "${cancel[@]}"; do scancel "$j" 2>/dev/null || true; done
}
trap finish EXIT
trap 'exit 130' INT TERM
# sub NAME DEPENDENCY [sbatch flags...] -- [job.sh args...]: submit a job running job.sh; prints its id.
sub() {
  local name="$1" dep="$2" flags=()
  shift 2
  while [[ "$1" != -- ]]; do flags+=("$1"); shift; done
  shift
  local out="$rdir/slurm/%x-%j.out"
  [[ " ${flags[*]} " == *" --array "* ]] && out="$rdir/slurm/%x-%A_%a.out"
  sbatch --parsable --export=ALL --kill-on-invalid-dep=yes --chdir "$root" -o "$out" -J "$name" \
    ${dep:+--dependency "afterok:$dep"} "${sbatch_args[@]}" "${flags[@]}" "$root/scripts/slurm/job.sh" "$@"
}
# serve STEP MODEL DEPENDENCY: the inference server job of a step; prints its id.
serve() {
  local url="$rdir/server/step-$1.url"
  rm -f "$url"
  ENGINE="$SERVER_ENGINE" ENGINE_ARGS="${SERVER_ENGINE_ARGS:-}" sbatch --parsable --export=ALL --kill-on-invalid-dep=yes \
    --chdir "$root" -o "$rdir/slurm/%x-%j.out" -J "spade-server-s$1" ${3:+--dependency "afterok:$3"} \
    "${server_sbatch_args[@]}" "$root/scripts/slurm/serve.sh" "$2" "$url"
}
array=(--array "0-$((shards - 1))")
dep="" srv=""
for ((s = 0; s < steps; s++)); do
  prev_srv="$srv" srv=""
  gen=()
  cancel=()
  [[ -n "$prev_srv" ]] && cancel=(--cancel "$prev_srv")
  if ((s == 0)); then
    name=spade-prepare
    [[ -n "${SERVER_ENGINE:-}" ]] && { srv="$(serve 0 "$start_model" "")"; servers+=("$srv"); }
    [[ -n "$srv" && -n "$designs" ]] && gen=(--server "$rdir/server/step-0.url")
  else
    name="spade-train-s$((s - 1))"
  fi
  prep="$(sub "$name" "$dep" -- "${cancel[@]}" "${gen[@]}" "step-$s-inputs" "${jargs[@]}")"
  jobs+=("$prep")
  if [[ -n "${SERVER_ENGINE:-}" ]] && ((s > 0)); then
    srv="$(serve "$s" "$rdir/step-$((s - 1))/checkpoint" "$prep")"
    servers+=("$srv")
  fi
  gen=()
  [[ -n "$srv" ]] && gen=(--server "$rdir/server/step-$s.url")
  dep="$(sub "spade-rollout-s$s" "$prep" "${array[@]}" -- "${gen[@]}" "$rdir/step-$s/rollouts.parquet/shard-@I@.parquet" "${jargs[@]}")"
  jobs+=("$dep")
done
cancel=()
[[ -n "$srv" ]] && cancel=(--cancel "$srv")
dep="$(sub "spade-train-s$((steps - 1))" "$dep" -- "${cancel[@]}" "$rdir/memory.parquet" "${jargs[@]}")"
jobs+=("$dep")
if [[ -n "$do_eval" ]]; then
  dep="$(sub spade-eval "$dep" "${array[@]}" -- "$rdir/eval.parquet/shard-@I@.parquet" "${jargs[@]}")"
  jobs+=("$dep")
fi
# The last job: make round itself, which finds every stage done and writes the report; wait for it.
# (sbatch --wait reports success for a job cancelled before it started, when a job it depends on
# failed: whether the round's outputs are all made is asked of make.)
if ! sub spade-round "$dep" --wait -- round "${jargs[@]}" >/dev/null ||
  ! make -q --no-print-directory "${outputs[@]}" "${jargs[@]}" 2>/dev/null; then
  echo "error: round $round failed; job logs in $rdir/slurm/" >&2
  exit 1
fi
echo "round $round of run $(basename "$rundir") done: $rdir; report: $rundir/report.html"
