#!/usr/bin/env bash
# The GPU path, proven in one go on a CUDA machine (~8 minutes on one GPU):
#
#   scripts/gpu-check.sh OUT [--dry-run] [--bin DIR] [--model PATH | --like DIR] [--device cuda:N|cpu]
#
# Steps, each under its own time limit, each recorded whether it passes or not:
#   build      `make build-cuda` and the checker (cargo, the CUDA toolkit) unless --bin DIR holds the
#              binaries built elsewhere (the stages, spade-sandbox-worker and gpu_check)
#   model      the model to check: --model PATH (a .gguf file or Hugging Face folder), or random weights
#              in the shape of --like DIR (a folder with config.json and the tokenizer files, as
#              `gpu_check config` writes them), made with PyTorch
#   forward    the model's logits on the CPU and on the device, same prompts: max difference / max
#              logit <= 1e-3, the top token the same at >= 99% of positions (also on the tiny model)
#   generate   one batch of 1, 8 and 32 sequences of 128 sampled tokens on the device: tokens/s
#   grpo       one GRPO step of spade-grpo-step on the same rollouts on the CPU and on the device (tiny
#              model, lr 1 and Adam's eps 1): every updated weight within 1e-3 of the update's largest change;
#              and the step time of the checked model on the device
#   round      a tiny `make round DEVICE=cuda` (tiny model, 2 documents, the Python sandbox; the
#              held-out environments as its evaluation: Reasoning-Gym needs its Python packages)
#   fsdp       the same GRPO step through scripts/grpo_step_fsdp.sh, torchrun and NCCL on one GPU
# Writes OUT/gpu-check.json (each step: ok, seconds, its figures; peak GPU memory) and OUT/log-STEP.txt.
# Exit 0 when every step passed, 1 when one failed, 2 when it could not start (no GPU, no binaries).
# --dry-run prints every step's commands and skips the ones that need a GPU, saying so.
# --device cpu rehearses every step on the CPU (a CPU build in --bin; the comparisons are then of the
# CPU with itself): the script's own plumbing, checked before a GPU's time is spent on it.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage="usage: scripts/gpu-check.sh OUT [--dry-run] [--bin DIR] [--model PATH | --like DIR] [--device cuda:N|cpu]"
out="" dry="" bin="" model="" like="" device="cuda:0"
while (($#)); do
  case "$1" in
    --dry-run) dry=1 ;;
    --bin) bin="${2:?--bin needs a folder}"; shift ;;
    --model) model="${2:?--model needs a path}"; shift ;;
    --like) like="${2:?--like needs a folder}"; shift ;;
    --device) device="${2:?--device needs cuda:N}"; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    -*) echo "gpu-check.sh: unknown option $1; $usage" >&2; exit 2 ;;
    *) [[ -z "$out" ]] || { echo "gpu-check.sh: one OUT folder, got $out and $1" >&2; exit 2; }; out="$1" ;;
  esac
  shift
done
[[ -n "$out" ]] || { echo "gpu-check.sh: no OUT folder; $usage" >&2; exit 2; }
for v in bin model like; do
  if [[ -n "${!v}" ]]; then
    [[ -e "${!v}" ]] || { echo "gpu-check.sh: --$v ${!v}: no such file or folder" >&2; exit 2; }
    declare "$v=$(cd "$(dirname "${!v}")" && pwd)/$(basename "${!v}")"
  fi
done
mkdir -p "$out" && out="$(cd "$out" && pwd)" || exit 2
work="$out/work"
mkdir -p "$work"
results="$out/steps.jsonl"
: > "$results"
py="${SPADE_TORCH_PYTHON:-python3}"

gpu=""
if [[ -z "$dry" && "$device" != cpu ]]; then
  command -v nvidia-smi >/dev/null && nvidia-smi -L > "$out/gpus.txt" 2>&1 && gpu=1
  [[ -n "$gpu" ]] || { echo "gpu-check.sh: no GPU (nvidia-smi -L failed or is missing); --dry-run shows the steps" >&2; exit 2; }
fi

# step NAME LIMIT_S NEEDS_GPU COMMAND...: run (or print) one step; its stdout's last JSON line
# becomes the step's figures.
failed=0
step() {
  local name="$1" limit="$2" needs_gpu="$3"
  shift 3
  echo "== $name (limit ${limit}s): $(printf '%q ' "$@")" >&2
  if [[ -n "$dry" ]]; then
    if [[ "$needs_gpu" == gpu ]]; then
      echo "   skipped: dry run, this step needs a CUDA GPU" >&2
      printf '{"step":"%s","ok":null,"skipped":"dry run: needs a CUDA GPU"}\n' "$name" >> "$results"
    else
      echo "   skipped: dry run" >&2
      printf '{"step":"%s","ok":null,"skipped":"dry run"}\n' "$name" >> "$results"
    fi
    return 0
  fi
  local t0 rc figures secs
  t0=$(date +%s%N)
  timeout --kill-after 10 "$limit" "$@" > "$out/log-$name.txt" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  figures=$(grep -E '^\{.*\}$' "$out/log-$name.txt" | tail -1)
  [[ -n "$figures" ]] || figures=null
  local ok=true why=""
  if ((rc != 0)); then
    ok=false failed=1
    why=$([[ $rc == 124 || $rc == 137 ]] && echo "timed out after ${limit}s" || echo "exit $rc")
    echo "   FAILED ($why); the end of $out/log-$name.txt:" >&2
    tail -5 "$out/log-$name.txt" | sed 's/^/   | /' >&2
  else
    echo "   ok in ${secs}s" >&2
  fi
  printf '{"step":"%s","ok":%s,"seconds":%s,"why":"%s","figures":%s}\n' "$name" "$ok" "$secs" "$why" "$figures" >> "$results"
}

# GPU memory, sampled every 200 ms while the steps run.
if [[ -n "$gpu" ]]; then
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$out/gpu-memory.txt" 2>/dev/null &
  sampler=$!
  trap 'kill $sampler 2>/dev/null' EXIT
fi

# build
if [[ -z "$bin" ]]; then
  bin="$root/target/cuda/release"
  step build 1800 any make -C "$root" build-cuda
fi
# The CUDA libraries make build-cuda linked (its PyPI wheels), after any the system has.
cudalib="$root/.cache/cuda/py/nvidia/cu13/lib"
[[ -d "$cudalib" ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$cudalib"
need=(spade-grpo-step spade-design spade-validate spade-rollout spade-regret spade-eval spade-sample-corpus spade-sandbox-worker gpu_check)
if [[ -z "$dry" ]]; then
  for b in "${need[@]}"; do
    [[ -x "$bin/$b" ]] || { echo "gpu-check.sh: $bin/$b: missing (build with make build-cuda, or pass --bin DIR)" >&2; exit 2; }
  done
fi
check="$bin/gpu_check"

# model
tiny="$work/tiny"
step tiny 120 any "$check" tiny --out "$tiny" --context 8192
if [[ -z "$model" ]]; then
  [[ -n "$like" ]] || like="$work/like"
  if [[ ! -e "$like/config.json" ]]; then
    step config 300 any "$check" config --out "$like"
  fi
  model="$work/random"
  step model 300 any "$py" "$root/scripts/gpu_check.py" random "$like" "$model"
fi

# forward, generate
step forward-tiny 300 gpu "$check" forward --model "$tiny" --device "$device"
step forward 300 gpu "$check" forward --model "$model" --device "$device"
for b in 1 8 32; do
  step "generate-$b" 300 gpu "$check" generate --model "$model" --device "$device" --batch "$b" --new 128
done

# grpo: the same step on the CPU and on the device, on rollouts written for the model's vocabulary
step rollouts 60 any "$py" "$root/scripts/gpu_check.py" rollouts "$tiny" "$work/rollouts-tiny.jsonl"
step rollouts-model 60 any "$py" "$root/scripts/gpu_check.py" rollouts "$model" "$work/rollouts.jsonl"
grpo_flags=(--lr 1e-3 --weight-decay 0 --seed 1 --metrics "$work/grpo-metrics.jsonl")
# Adam's first step is lr·sign(g) wherever |g| >> eps, so a gradient near zero turns a rounding
# difference into a whole step; with eps = 1 the step is lr·g/(|g| + 1), nearly linear in the
# gradient, and the comparison measures the gradients. lr = 1 makes that step large against one
# rounding step of the stored f32 weights.
eq_flags=(--lr 1 --adam-eps 1 --weight-decay 0 --seed 1 --metrics "$work/grpo-metrics.jsonl")
step grpo-cpu 300 any "$bin/spade-grpo-step" --model "$tiny" --rollouts "$work/rollouts-tiny.jsonl" -o "$work/step-cpu" --device cpu "${eq_flags[@]}"
step grpo-device 300 gpu "$bin/spade-grpo-step" --model "$tiny" --rollouts "$work/rollouts-tiny.jsonl" -o "$work/step-gpu" --device "$device" "${eq_flags[@]}"
step grpo-equal 120 gpu "$py" "$root/scripts/gpu_check.py" compare "$tiny" "$work/step-cpu" "$work/step-gpu"
step grpo-model 600 gpu "$bin/spade-grpo-step" --model "$model" --rollouts "$work/rollouts.jsonl" -o "$work/step-model" --device "$device" "${grpo_flags[@]}"

# round: the tiny model through every stage on the device. The Makefile's Python is the checkout's
# .venv; where there is none (a GPU node without network), a stand-in that runs $py, whose packages
# (pyarrow, numpy) the round's scripts need.
venv="$root/.venv"
if [[ ! -x "$venv/bin/python" && -z "$dry" ]]; then
  venv="$work/venv"
  mkdir -p "$venv/bin"
  printf '#!/bin/sh\nexec %q "$@"\n' "$(command -v "$py")" > "$venv/bin/python"
  chmod +x "$venv/bin/python"
  touch "$venv/.stamp"
fi
step round 600 gpu make -C "$root" --no-print-directory round NO_BUILD=1 BIN="$bin" VENV="$venv" RUNS="$work/runs" DEVICE="$device" \
  MODEL="$tiny" SEEDS="$root/tests/data/round-seeds" SIZE=2,2,4 POOL=2 THREADS=4 REPR=f32 \
  DESIGN_FLAGS="--max-new-tokens 24 --examples 0 --negatives 0" ROLLOUT_FLAGS="--max-new-tokens 6 --max-turns 2 --progress off" \
  EVAL_SUITES="envs:$root/data/heldout-envs" EVAL_SAMPLES=1 EVAL_FLAGS="--max-tokens 6 --max-turns 2 --progress off" LR=1e-3

# fsdp: the step through PyTorch FSDP under torchrun, NCCL on one GPU
step fsdp 600 gpu env SPADE_GRPO_STEP="$bin/spade-grpo-step" SPADE_TORCH_PYTHON="$py" NPROC=1 \
  LAUNCHER="$py -m torch.distributed.run --standalone --nproc-per-node 1" \
  "$root/scripts/grpo_step_fsdp.sh" --model "$tiny" --rollouts "$work/rollouts-tiny.jsonl" -o "$work/step-fsdp" --device "$device" "${grpo_flags[@]}"

peak=null
if [[ -n "$gpu" ]]; then
  kill "$sampler" 2>/dev/null
  peak=$(sort -n "$out/gpu-memory.txt" | tail -1)
  [[ -n "$peak" ]] || peak=null
fi
"$py" - "$results" "$out/gpu-check.json" "$peak" "$device" "${dry:+dry}" <<'EOF'
import json, sys, platform, subprocess
steps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
gpus = ""
try:
    gpus = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
except Exception:
    pass
peak = None if sys.argv[3] == "null" else int(sys.argv[3])
doc = {"gpus": gpus, "device": sys.argv[4], "dry_run": sys.argv[5] == "dry", "host": platform.node(),
       "peak_gpu_memory_mib": peak, "steps": steps,
       "passed": [s["step"] for s in steps if s.get("ok") is True],
       "failed": [s["step"] for s in steps if s.get("ok") is False]}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
print(json.dumps({k: doc[k] for k in ("passed", "failed", "peak_gpu_memory_mib")}))
EOF
echo "gpu-check.sh: $out/gpu-check.json" >&2
exit "$failed"
