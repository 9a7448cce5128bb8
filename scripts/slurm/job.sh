#!/usr/bin/env bash
# One job of scripts/slurm/round.sh: `make MAKE_ARG...` in the repository (the job's working directory,
# round.sh submits with --chdir), so the job runs the Makefile's own recipe for a target of the round
# with the round's knobs (the submitting environment and the VAR=value arguments).
#
#   sbatch [--array 0-N] scripts/slurm/job.sh [--server URLFILE] [--cancel JOBID] MAKE_ARG...
#
# `@I@` in a MAKE_ARG becomes the array task's index ($SLURM_ARRAY_TASK_ID): one shard file per task.
# --server URLFILE: wait (up to WAIT_SERVER seconds, 900) for the inference server's address in URLFILE
# (scripts/slurm/serve.sh writes it) and generate through it (SPADE_SERVER, which design, rollout and
# eval read as --server). --cancel JOBID: cancel that job first (a server whose rollouts are done).
set -euo pipefail
url="" cancel=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --server) url="${2:?job.sh: --server needs a URLFILE}"; shift 2 ;;
    --cancel) cancel="${2:?job.sh: --cancel needs a job id}"; shift 2 ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || { echo "usage: job.sh [--server URLFILE] [--cancel JOBID] MAKE_ARG..." >&2; exit 2; }
if [[ -n "$cancel" ]]; then
  scancel "$cancel" 2>/dev/null || true
fi
if [[ -n "$url" ]]; then
  for _ in $(seq "${WAIT_SERVER:-900}"); do
    [[ -f "$url" ]] && break
    sleep 1
  done
  [[ -f "$url" ]] || { echo "job.sh: no inference server address in $url after ${WAIT_SERVER:-900} s" >&2; exit 1; }
  SPADE_SERVER="$(cat "$url")"
  export SPADE_SERVER
fi
args=("${@//@I@/${SLURM_ARRAY_TASK_ID:-}}")
# This make is the top one: nothing of a make that ran round.sh carries over.
unset MAKEFLAGS MFLAGS MAKELEVEL
exec make --no-print-directory "${args[@]}"
