#!/usr/bin/env bash
# The weight hand-off to llama.cpp: convert a checkpoint folder that spade-grpo-step (or spade-sft)
# wrote — Hugging Face config.json / model.safetensors / tokenizer.json — into a GGUF file beside
# it, CKPT/model.TYPE.gguf, with llama.cpp's own converter (convert_hf_to_gguf.py and its gguf
# package, from the pinned llama.cpp sources that scripts/llama-server.sh builds; run in the PyTorch
# environment of scripts/torch-venv.sh). Prints the file's path on stdout. Idempotent: a file newer
# than the weights is kept. Written to a temporary name and renamed, so a reader never sees half.
#
#   scripts/to-gguf.sh CKPT [TYPE]      TYPE: f16 (default), f32, bf16 or q8_0
#
# Env: GGUF_TYPE (TYPE's default), SPADE_TORCH_PYTHON (a python that has torch, transformers and
# gguf, with llama.cpp's converter in its prefix's llama.cpp/; default: scripts/torch-venv.sh's).
set -euo pipefail
usage="usage: scripts/to-gguf.sh CKPT [f16|f32|bf16|q8_0]"
ckpt="${1:?$usage}"
type="${2:-${GGUF_TYPE:-f16}}"
case "$type" in f16 | f32 | bf16 | q8_0) ;; *) echo "to-gguf.sh: TYPE \`$type': expected f16, f32, bf16 or q8_0" >&2; exit 2 ;; esac
for f in config.json model.safetensors tokenizer.json; do
  [[ -f "$ckpt/$f" ]] || { echo "to-gguf.sh: $ckpt/$f: missing (expected a checkpoint folder: config.json, model.safetensors, tokenizer.json)" >&2; exit 2; }
done
out="$ckpt/model.$type.gguf"
if [[ -f "$out" && "$out" -nt "$ckpt/model.safetensors" ]]; then
  echo "$out"
  exit 0
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${SPADE_TORCH_PYTHON:-$("$root/scripts/torch-venv.sh")}"
converter="$(dirname "$(dirname "$py")")/llama.cpp/convert_hf_to_gguf.py"
[[ -f "$converter" ]] || { echo "to-gguf.sh: $converter: missing (scripts/torch-venv.sh puts llama.cpp's converter there)" >&2; exit 2; }
# The converter reads the model's name from the folder; a hidden temporary name in the same folder.
tmp="$ckpt/.model.$type.gguf.part"
trap 'rm -f "$tmp"' EXIT
"$py" "$converter" "$ckpt" --outtype "$type" --outfile "$tmp" >&2
mv "$tmp" "$out"
echo "$out"
