#!/usr/bin/env bash
# spade-grpo-step with its update on PyTorch FSDP: the same flags, the same tables, the same
# checkpoint folder (either trainer resumes the other's). spade-grpo-step reads the tables and
# computes the advantages and batches; scripts/grpo_step_fsdp.py, launched with torchrun, does the
# update (see its docstring). A drop-in for the stage:
#
#   make round GRPO_STEP=scripts/grpo_step_fsdp.sh                 # one process (CPU: f32, gloo)
#   make round GRPO_STEP=scripts/grpo_step_fsdp.sh NPROC=8 DEVICE=cuda:0   # 8 GPUs of this node
#   scripts/slurm/round.sh runs/r 1 GRPO_STEP=scripts/grpo_step_fsdp.sh SBATCH_ARGS="--nodes 4 --ntasks-per-node 1 --gres gpu:8"
#
# Launch: one process when NPROC is 1 and the Slurm job (if any) has one task; NPROC processes of
# this node (`torchrun --standalone --nproc-per-node NPROC`); inside a Slurm job with several tasks
# (SLURM_NTASKS, e.g. one per node), one torchrun agent per task through srun, NPROC processes each,
# meeting at the job's first node (c10d rendezvous, port RDZV_PORT [29500]):
#   srun torchrun --nnodes $SLURM_NTASKS --nproc-per-node NPROC --rdzv-backend c10d \
#        --rdzv-endpoint HEAD:29500 --rdzv-id $SLURM_JOB_ID scripts/grpo_step_fsdp.py
# Env: NPROC [GPUs on this node with --device cuda, else 1], SPADE_GRPO_STEP (the spade-grpo-step
# binary; default BIN's, i.e. target/$PROFILE, release), SPADE_TORCH_PYTHON (default:
# scripts/torch-venv.sh's environment, made on first use), LAUNCHER (your own launch command: it gets
# the script's path and `--plan FILE` appended).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
grpo="${SPADE_GRPO_STEP:-${BIN:-$root/target/${PROFILE:-release}}/spade-grpo-step}"
[[ -x "$grpo" ]] || { echo "grpo_step_fsdp.sh: $grpo: no spade-grpo-step binary (make build, or set SPADE_GRPO_STEP)" >&2; exit 2; }
py="${SPADE_TORCH_PYTHON:-$("$root/scripts/torch-venv.sh")}"
script="$root/scripts/grpo_step_fsdp.py"
cuda=""
for a in "$@"; do [[ "$a" == cuda* ]] && cuda=1; done
nproc="${NPROC:-}"
if [[ -z "$nproc" ]]; then
  nproc=1
  [[ -n "$cuda" ]] && command -v nvidia-smi >/dev/null && nproc="$(nvidia-smi -L | wc -l)"
fi
[[ "$nproc" =~ ^[1-9][0-9]*$ ]] || { echo "grpo_step_fsdp.sh: NPROC \`$nproc': expected a number of processes, at least 1" >&2; exit 2; }
tasks="${SLURM_NTASKS:-1}"
if [[ -n "${LAUNCHER:-}" ]]; then
  launcher="$LAUNCHER"
elif ((tasks > 1)); then
  head="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1)"
  launcher="srun --ntasks $tasks $py -m torch.distributed.run --nnodes $tasks --nproc-per-node $nproc --rdzv-backend c10d --rdzv-endpoint $head:${RDZV_PORT:-29500} --rdzv-id ${SLURM_JOB_ID:-spade}"
elif ((nproc > 1)); then
  launcher="$py -m torch.distributed.run --standalone --nproc-per-node $nproc"
else
  launcher="$py"
fi
exec "$grpo" "$@" --trainer "$launcher $script"
