#!/usr/bin/env bash
# Submit one spade round to Slurm and wait for it: the single-process stages run as jobs, and
# rollout and eval as array jobs over `--shard I/N` (I = $SLURM_ARRAY_TASK_ID, from 0); the next
# stage reads the shard folder as one table. Stages run on whichever node Slurm picks, so RUNDIR
# and the binaries must be on a shared filesystem.
#
#   scripts/slurm/round.sh RUNDIR ROUND
#
# Environment (defaults in brackets; the names and defaults are the Makefile's knobs, so the same
# values give the same round as `make round`): BIN [target/release], MODEL [scripts/fetch-model.sh],
# MEMORY (the round's starting memory) [RUNDIR/memory-0000.parquet, built from SEEDS if missing],
# START_MODEL [MODEL for round 1, else the previous round's checkpoint], SHARDS [4], SIZE [1,2,2]
# (documents, samples per document, group), POOL [2], SEED [0], TEMPERATURE [1.0], THREADS [2],
# LR [1e-6], VARIANT [blend], CORPUS [data/corpus], SEEDS [data/seed-envs], EVAL_SUITES
# [rg:math,rg:logic], EVAL_N [2], SAMPLE_FLAGS, DESIGN_FLAGS, VALIDATE_FLAGS, ROLLOUT_FLAGS, REGRET_FLAGS, GRPO_FLAGS,
# EVAL_FLAGS [as in the Makefile], SBATCH_ARGS (extra sbatch flags, e.g. "--partition gpu --gres gpu:1").
# Generation through an inference server (multi-node): SERVER_ENGINE (vllm | sglang | llama; unset = the
# stages generate with the embedded model) submits scripts/slurm/serve.sh on START_MODEL as a job of its
# own (SERVER_SBATCH_ARGS, e.g. "--partition gpu --gres gpu:8"; SERVER_ENGINE_ARGS its extra flags), and
# design and the rollout array generate through it (`--server`, the address it publishes in
# RDIR/server/url); it is cancelled once the rollouts are done. Each round serves its own START_MODEL,
# the previous round's checkpoint: that is the weight hand-off. Eval (on the trained checkpoint) runs
# embedded.
set -euo pipefail
RUNDIR="${1:?usage: round.sh RUNDIR ROUND}"
ROUND="${2:?usage: round.sh RUNDIR ROUND}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$(cd "${BIN:-$root/target/release}" && pwd)"
MODEL="${MODEL:-$("$root/scripts/fetch-model.sh")}"
SHARDS="${SHARDS:-4}" SIZE="${SIZE:-1,2,2}" POOL="${POOL:-2}"
IFS=, read -r DOCS PER_DOC GROUP <<<"$SIZE"
SEED="${SEED:-0}" TEMPERATURE="${TEMPERATURE:-1.0}" THREADS="${THREADS:-2}" LR="${LR:-1e-6}" VARIANT="${VARIANT:-blend}"
CORPUS="${CORPUS:-data/corpus}" SEEDS="${SEEDS:-data/seed-envs}"
EVAL_SUITES="${EVAL_SUITES:-rg:math,rg:logic}" EVAL_N="${EVAL_N:-2}"
SAMPLE_FLAGS="${SAMPLE_FLAGS---max-words 250}" DESIGN_FLAGS="${DESIGN_FLAGS---max-new-tokens 640 --examples 1}" VALIDATE_FLAGS="${VALIDATE_FLAGS-}"
ROLLOUT_FLAGS="${ROLLOUT_FLAGS---max-new-tokens 96 --max-turns 3}" REGRET_FLAGS="${REGRET_FLAGS-}"
GRPO_FLAGS="${GRPO_FLAGS-}" EVAL_FLAGS="${EVAL_FLAGS---max-tokens 256}"
mkdir -p "$RUNDIR"
RUNDIR="$(cd "$RUNDIR" && pwd)"
R4="$(printf %04d "$ROUND")"
RDIR="$RUNDIR/round-$R4"
SDIR="$RDIR/step-0"
PREV="$RUNDIR/round-$(printf %04d $((ROUND - 1)))"
MEMORY="${MEMORY:-$([[ $ROUND -eq 1 ]] && echo "$RUNDIR/memory-0000.parquet" || echo "$PREV/memory.parquet")}"
START_MODEL="${START_MODEL:-$([[ $ROUND -eq 1 ]] && echo "$MODEL" || echo "$PREV/step-0/checkpoint")}"
COMMON="--seed $SEED --round $ROUND --metrics $RUNDIR/metrics.jsonl"
MODELFLAGS="--threads $THREADS --device cpu --temperature $TEMPERATURE"
mkdir -p "$RDIR/slurm" "$SDIR/rollouts" "$RDIR/eval"
log="$RDIR/slurm/%x-%A_%a.out"
sub() { sbatch --parsable --kill-on-invalid-dep=yes --chdir "$root" -o "$log" ${SBATCH_ARGS:-} "$@"; }
GEN=""
srv=""
if [[ -n "${SERVER_ENGINE:-}" ]]; then
  url="$RDIR/server/url"
  rm -f "$url"
  srv=$(ENGINE="$SERVER_ENGINE" ENGINE_ARGS="${SERVER_ENGINE_ARGS:-}" sbatch --parsable --chdir "$root" \
    -o "$RDIR/slurm/%x-%j.out" ${SERVER_SBATCH_ARGS:-} -J spade-server "$root/scripts/slurm/serve.sh" "$START_MODEL" "$url")
  trap 'scancel "$srv" 2>/dev/null || true' EXIT
  # A generating job waits (up to 15 min) for the server's address, then passes it on.
  # (--wrap scripts run under /bin/sh: POSIX tests only.)
  WAITURL="for i in \$(seq 900); do [ -f '$url' ] && break; sleep 1; done; [ -f '$url' ] || { echo 'no inference server address in $url' >&2; exit 1; }"
  GEN="--server \"\$(cat '$url')\""
fi

prep=$(sub -J spade-prepare --wrap "set -e
  [ -f '$MEMORY' ] || { '$BIN/spade-validate' '$SEEDS' -o '$RUNDIR/seed-envs.parquet' --rejects '$RUNDIR/seed-rejects.parquet' --round 0; \
    '$BIN/spade-regret' --envs '$RUNDIR/seed-envs.parquet' -o '$RUNDIR/seed-scores.parquet' --memory-out '$MEMORY' --round 0; }
  '$BIN/spade-sample-corpus' '$CORPUS' -o '$RDIR/docs.parquet' --n $DOCS $SAMPLE_FLAGS $COMMON
  ${WAITURL:-}
  '$BIN/spade-design' $GEN --model '$START_MODEL' --docs '$RDIR/docs.parquet' --memory '$MEMORY' -o '$RDIR/candidates.parquet' --per-doc $PER_DOC $DESIGN_FLAGS $MODELFLAGS $COMMON
  '$BIN/spade-validate' '$RDIR/candidates.parquet' -o '$RDIR/envs.parquet' --rejects '$RDIR/rejects.parquet' --known '$MEMORY' --jobs 2 $VALIDATE_FLAGS $COMMON")
roll=$(sub -J spade-rollout --dependency "afterok:$prep" --array "0-$((SHARDS - 1))" --wrap "${WAITURL:-true}; '$BIN/spade-rollout' $GEN --model '$START_MODEL' \
  --envs '$RDIR/envs.parquet' --memory '$MEMORY' --pool $POOL --group $GROUP --step 0 \
  --shard \$SLURM_ARRAY_TASK_ID/$SHARDS -o '$SDIR/rollouts/shard-'\$SLURM_ARRAY_TASK_ID.parquet $ROLLOUT_FLAGS $MODELFLAGS $COMMON")
train=$(sub -J spade-train --dependency "afterok:$roll" --wrap "set -e
  ${srv:+scancel $srv || true}
  '$BIN/spade-regret' '$SDIR/rollouts' --memory '$MEMORY' --envs '$RDIR/envs.parquet' --candidates '$RDIR/candidates.parquet' \
    --rejects '$RDIR/rejects.parquet' --variant $VARIANT -o '$SDIR/scores.parquet' --memory-out '$SDIR/memory.parquet' $REGRET_FLAGS $COMMON
  '$BIN/spade-grpo-step' --model '$START_MODEL' --rollouts '$SDIR/rollouts' --candidates '$RDIR/candidates.parquet' \
    --scores '$SDIR/scores.parquet' --lr $LR -o '$SDIR/checkpoint' $GRPO_FLAGS $MODELFLAGS $COMMON
  cp '$SDIR/memory.parquet' '$RDIR/memory.parquet.tmp' && mv '$RDIR/memory.parquet.tmp' '$RDIR/memory.parquet'")
eval_job=$(sub -J spade-eval --dependency "afterok:$train" --array "0-$((SHARDS - 1))" --wrap "'$BIN/spade-eval' \
  --model '$SDIR/checkpoint' --suite $EVAL_SUITES --n $EVAL_N --shard \$SLURM_ARRAY_TASK_ID/$SHARDS \
  -o '$RDIR/eval/shard-'\$SLURM_ARRAY_TASK_ID.parquet $EVAL_FLAGS $MODELFLAGS $COMMON")
# Wait for the whole chain; fail if any job failed.
sbatch --parsable --wait --kill-on-invalid-dep=yes --chdir "$root" -o /dev/null --dependency "afterok:$eval_job" -J spade-done --wrap true >/dev/null || {
  echo "error: round $ROUND failed; job logs in $RDIR/slurm/" >&2
  exit 1
}
echo "$RDIR"
