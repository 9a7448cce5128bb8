#!/usr/bin/env bash
# Submit one spade round to Slurm and wait for it: the single-process stages run as jobs, and
# rollout and eval as array jobs over `--shard I/N` (I = $SLURM_ARRAY_TASK_ID, from 0); the next
# stage reads the shard folder as one table. Stages run on whichever node Slurm picks, so RUNDIR
# and the binaries must be on a shared filesystem.
#
#   scripts/slurm/round.sh RUNDIR ROUND
#
# Environment (defaults in brackets): BIN [target/release], MODEL [scripts/fetch-model.sh], MEMORY (the
# round's starting memory) [RUNDIR/memory-0000.parquet, built from data/seed-envs if missing],
# START_MODEL [MODEL for round 1, else the previous round's checkpoint], SHARDS [4], DOCS [2],
# PER_DOC [2], GROUP [2], POOL [4], SEED [0], TEMPERATURE [1.0], THREADS [1], EVAL_SUITES [rg:math],
# EVAL_N [2], SBATCH_ARGS (extra sbatch flags, e.g. "--partition gpu --gres gpu:1").
set -euo pipefail
RUNDIR="${1:?usage: round.sh RUNDIR ROUND}"
ROUND="${2:?usage: round.sh RUNDIR ROUND}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$(cd "${BIN:-$root/target/release}" && pwd)"
MODEL="${MODEL:-$("$root/scripts/fetch-model.sh")}"
SHARDS="${SHARDS:-4}" DOCS="${DOCS:-2}" PER_DOC="${PER_DOC:-2}" GROUP="${GROUP:-2}" POOL="${POOL:-4}"
SEED="${SEED:-0}" TEMPERATURE="${TEMPERATURE:-1.0}" THREADS="${THREADS:-1}"
EVAL_SUITES="${EVAL_SUITES:-rg:math}" EVAL_N="${EVAL_N:-2}"
mkdir -p "$RUNDIR"
RUNDIR="$(cd "$RUNDIR" && pwd)"
R4="$(printf %04d "$ROUND")"
RDIR="$RUNDIR/round-$R4"
SDIR="$RDIR/step-0"
PREV="$RUNDIR/round-$(printf %04d $((ROUND - 1)))"
MEMORY="${MEMORY:-$([[ $ROUND -eq 1 ]] && echo "$RUNDIR/memory-0000.parquet" || echo "$PREV/memory.parquet")}"
START_MODEL="${START_MODEL:-$([[ $ROUND -eq 1 ]] && echo "$MODEL" || echo "$PREV/step-0/checkpoint")}"
COMMON="--seed $SEED --round $ROUND --metrics $RUNDIR/metrics.jsonl"
MODELFLAGS="--threads $THREADS --temperature $TEMPERATURE"
mkdir -p "$RDIR/slurm" "$SDIR/rollouts" "$RDIR/eval"
log="$RDIR/slurm/%x-%A_%a.out"
sub() { sbatch --parsable --kill-on-invalid-dep=yes --chdir "$root" -o "$log" ${SBATCH_ARGS:-} "$@"; }

prep=$(sub -J spade-prepare --wrap "set -e
  [[ -f '$MEMORY' ]] || { '$BIN/spade-validate' data/seed-envs -o '$RUNDIR/seed-envs.parquet' --rejects '$RUNDIR/seed-rejects.parquet' --round 0; \
    '$BIN/spade-regret' --envs '$RUNDIR/seed-envs.parquet' -o '$RUNDIR/seed-scores.parquet' --memory-out '$MEMORY' --round 0; }
  '$BIN/spade-sample-corpus' data/corpus -o '$RDIR/docs.parquet' --n $DOCS $COMMON
  '$BIN/spade-design' --model '$START_MODEL' --docs '$RDIR/docs.parquet' --memory '$MEMORY' -o '$RDIR/candidates.parquet' --per-doc $PER_DOC $MODELFLAGS $COMMON
  '$BIN/spade-validate' '$RDIR/candidates.parquet' -o '$RDIR/envs.parquet' --rejects '$RDIR/rejects.parquet' $COMMON")
roll=$(sub -J spade-rollout --dependency "afterok:$prep" --array "0-$((SHARDS - 1))" --wrap "'$BIN/spade-rollout' --model '$START_MODEL' \
  --envs '$RDIR/envs.parquet' --memory '$MEMORY' --pool $POOL --group $GROUP --step 0 \
  --shard \$SLURM_ARRAY_TASK_ID/$SHARDS -o '$SDIR/rollouts/shard-\$SLURM_ARRAY_TASK_ID.parquet' $MODELFLAGS $COMMON")
train=$(sub -J spade-train --dependency "afterok:$roll" --wrap "set -e
  '$BIN/spade-regret' '$SDIR/rollouts' --memory '$MEMORY' --envs '$RDIR/envs.parquet' --candidates '$RDIR/candidates.parquet' \
    --rejects '$RDIR/rejects.parquet' -o '$SDIR/scores.parquet' --memory-out '$SDIR/memory.parquet' $COMMON
  '$BIN/spade-grpo-step' --model '$START_MODEL' --rollouts '$SDIR/rollouts' --candidates '$RDIR/candidates.parquet' \
    --scores '$SDIR/scores.parquet' -o '$SDIR/checkpoint' $MODELFLAGS $COMMON
  cp '$SDIR/memory.parquet' '$RDIR/memory.parquet.tmp' && mv '$RDIR/memory.parquet.tmp' '$RDIR/memory.parquet'")
eval_job=$(sub -J spade-eval --dependency "afterok:$train" --array "0-$((SHARDS - 1))" --wrap "'$BIN/spade-eval' \
  --model '$SDIR/checkpoint' --suite $EVAL_SUITES --n $EVAL_N --shard \$SLURM_ARRAY_TASK_ID/$SHARDS \
  -o '$RDIR/eval/shard-\$SLURM_ARRAY_TASK_ID.parquet' $MODELFLAGS $COMMON")
# Wait for the whole chain; fail if any job failed.
sbatch --parsable --wait --kill-on-invalid-dep=yes --chdir "$root" -o /dev/null --dependency "afterok:$eval_job" -J spade-done --wrap true >/dev/null || {
  echo "error: round $ROUND failed; job logs in $RDIR/slurm/" >&2
  exit 1
}
echo "$RDIR"
