#!/usr/bin/env bash
#SBATCH -J spade-server
# An OpenAI-compatible inference server for spade's generating stages (design, rollout, eval with
# `--server`), run as a Slurm job on the allocation's GPU node(s). Once the server answers, its address
# is published as `http://HOST:PORT/v1#NAME` in URLFILE (on the shared filesystem), which the stage
# jobs read; the file is removed when the job ends (scancel stops the server).
#
#   sbatch --gres gpu:8 scripts/slurm/serve.sh MODEL URLFILE      (or run it directly)
#
# MODEL: a checkpoint folder (the folder spade-grpo-step writes is what vLLM and SGLang load; for
# llama.cpp it is converted to CKPT/model.GGUF_TYPE.gguf first by scripts/to-gguf.sh, llama.cpp's own
# converter in the PyTorch environment of scripts/torch-venv.sh) or a .gguf file. Serving the next
# checkpoint is a new job on it: that is the weight hand-off.
# Env: ENGINE [vllm] (vllm | sglang | llama), NAME [spade], PORT [8000], ENGINE_ARGS (extra server
# flags, e.g. "--tensor-parallel-size 8"), LLAMA_SERVER [llama-server on PATH, else
# scripts/llama-server.sh's build — build it beforehand: the stage jobs wait 15 min for the address], SLOTS [16] and CTX [4096] (llama: parallel sequences and tokens
# each), WAIT [900] (seconds the server may take to come up).
set -euo pipefail
MODEL="${1:?usage: serve.sh MODEL URLFILE}"
URLFILE="${2:?usage: serve.sh MODEL URLFILE}"
ENGINE="${ENGINE:-vllm}" NAME="${NAME:-spade}" PORT="${PORT:-8000}" SLOTS="${SLOTS:-16}" CTX="${CTX:-4096}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Under sbatch this file is a spool copy: the repository is the job's working directory (round.sh
# submits with --chdir) or where sbatch ran.
for d in "$PWD" "${SLURM_SUBMIT_DIR:-}"; do
  [[ -n "$d" && -f "$d/scripts/slurm/serve.sh" ]] && { root="$d"; break; }
done
host="$(hostname -f 2>/dev/null || hostname)"
# shellcheck disable=SC2206
extra=(${ENGINE_ARGS:-})
case "$ENGINE" in
  vllm) cmd=(vllm serve "$MODEL" --served-model-name "$NAME" --host 0.0.0.0 --port "$PORT" "${extra[@]}") ;;
  sglang) cmd=(python3 -m sglang.launch_server --model-path "$MODEL" --served-model-name "$NAME" --host 0.0.0.0 --port "$PORT" "${extra[@]}") ;;
  llama)
    # llama-server serves .gguf files: a checkpoint folder is converted first, beside its weights,
    # with llama.cpp's own converter (scripts/to-gguf.sh; GGUF_TYPE, f16 by default).
    if [[ -d "$MODEL" ]]; then
      MODEL="$("$root/scripts/to-gguf.sh" "$MODEL")"
    elif [[ "$MODEL" != *.gguf ]]; then
      echo "serve.sh: llama-server serves .gguf files or checkpoint folders (converted), not $MODEL" >&2
      exit 2
    fi
    bin="${LLAMA_SERVER:-$(command -v llama-server || "$root/scripts/llama-server.sh")}"
    cmd=("$bin" -m "$MODEL" --alias "$NAME" --host 0.0.0.0 --port "$PORT" -np "$SLOTS" -c "$((SLOTS * CTX))" "${extra[@]}") ;;
  *) echo "serve.sh: unknown ENGINE $ENGINE (vllm | sglang | llama)" >&2; exit 2 ;;
esac
"${cmd[@]}" &
pid=$!
trap 'rm -f "$URLFILE"; kill "$pid" 2>/dev/null || true' EXIT
trap 'exit 143' TERM INT
deadline=$((SECONDS + ${WAIT:-900}))
until curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "serve.sh: the server exited before answering" >&2; exit 1; }
  (( SECONDS < deadline )) || { echo "serve.sh: no answer on port $PORT after ${WAIT:-900} s" >&2; exit 1; }
  sleep 2
done
mkdir -p "$(dirname "$URLFILE")"
echo "http://$host:$PORT/v1#$NAME" > "$URLFILE.tmp" && mv "$URLFILE.tmp" "$URLFILE"
echo "serving $MODEL at $(cat "$URLFILE")" >&2
wait "$pid"
