#!/usr/bin/env bash
# Build (once) a cached virtualenv with llama-cpp-python, which compiles llama.cpp from source.
# It is the peer used to make the tokenizer fixture and by the bench. Idempotent; slow the first
# time (llama.cpp is compiled, ~15-30 min on 2 cores). Prints the venv's python on stdout.
#
# Env: SPADE_LLAMA_VENV (default: <repo>/.cache/llama-cpp-venv), LLAMA_CPP_PYTHON_VERSION,
#      CMAKE_BUILD_PARALLEL_LEVEL (default 2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
venv="${SPADE_LLAMA_VENV:-$root/.cache/llama-cpp-venv}"
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip >&2
# Native CPU build, no GPU backends; keep the build single-config and quiet.
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF}" \
  "$venv/bin/python" -m pip install --quiet --no-cache-dir "llama-cpp-python==$version" numpy >&2
"$venv/bin/python" -c "import llama_cpp" >&2
echo "$venv/bin/python"
