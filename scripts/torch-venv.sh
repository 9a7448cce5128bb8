#!/usr/bin/env bash
# Make (once) the PyTorch environment the stages' torch-side tools run in, and print its python's
# path on stdout:
#   - llama.cpp's own checkpoint converter (convert_hf_to_gguf.py and its gguf package, from the
#     same pinned llama.cpp sources scripts/llama-server.sh builds), for scripts/to-gguf.sh;
#   - the FSDP GRPO step (scripts/grpo_step_fsdp.py) and Hugging Face transformers' model classes.
# PyPI's torch wheels for x86-64 Linux are the CUDA builds: the first run downloads ~3 GB and the
# venv takes ~7 GB. Idempotent (a stamp names the pins); kept apart from .venv so that `make test`
# never pays for it.
#
# Env: SPADE_TORCH_VENV (default: <repo>/.cache/torch-venv), SPADE_LLAMA_SERVER_DIR (the sources).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${SPADE_TORCH_VENV:-$root/.cache/torch-venv}"
src_dir="${SPADE_LLAMA_SERVER_DIR:-$root/.cache/llama-server}"
# shellcheck source=scripts/llama-cpp-sources.sh
source "$root/scripts/llama-cpp-sources.sh"
pins="torch==2.5.1 transformers==4.57.6 safetensors==0.6.2 sentencepiece==0.2.1 protobuf==4.25.8 pyarrow>=15 numpy<2.3"
stamp="$venv/.stamp"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$pins llama.cpp $llama_version" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
tarball="$(llama_tarball "$src_dir")"
rm -rf "$venv"
python3 -m venv "$venv"
echo "torch-venv.sh: installing $pins into $venv (~3 GB download the first time)" >&2
# shellcheck disable=SC2086
"$venv/bin/pip" install --quiet $pins >&2
# The converter and its gguf package, as the pinned llama.cpp ships them.
mkdir -p "$venv/llama.cpp"
tar xzf "$tarball" -C "$venv/llama.cpp" --strip-components=3 \
  "llama_cpp_python-$llama_version/vendor/llama.cpp/convert_hf_to_gguf.py" \
  "llama_cpp_python-$llama_version/vendor/llama.cpp/conversion" \
  "llama_cpp_python-$llama_version/vendor/llama.cpp/gguf-py"
"$venv/bin/pip" install --quiet --no-deps "$venv/llama.cpp/gguf-py" >&2
"$venv/bin/pip" install --quiet "pyyaml>=5.1" "tqdm>=4.27" >&2
echo "$pins llama.cpp $llama_version" > "$stamp"
echo "$venv/bin/python"
