#!/usr/bin/env bash
# Build (once) llama.cpp's `llama-server`, an OpenAI-compatible inference server, from the llama.cpp
# sources vendored in llama-cpp-python's source distribution on PyPI (pinned, checksum-verified).
# It is the real server the server-backend tests and bench run against on loopback; `llama-bench`
# is built beside it (the model bench's single-stream peer). Idempotent;
# slow the first time (~15-25 min on 2 cores). Prints the binary's path on stdout.
#
# Env: SPADE_LLAMA_SERVER_DIR (default: <repo>/.cache/llama-server), CMAKE_BUILD_PARALLEL_LEVEL (2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${SPADE_LLAMA_SERVER_DIR:-$root/.cache/llama-server}"
# shellcheck source=scripts/llama-cpp-sources.sh
source "$root/scripts/llama-cpp-sources.sh"
bin="$dir/bin/llama-server"
if [[ -x "$bin" && -x "$dir/bin/llama-bench" ]]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
# cmake from PyPI (the machine need not have it).
if [[ ! -x "$dir/tools/bin/cmake" ]]; then
  python3 -m venv "$dir/tools"
  "$dir/tools/bin/pip" install --quiet cmake >&2
fi
tarball="$(llama_tarball "$dir")"
rm -rf "$dir/src" "$dir/build"
mkdir -p "$dir/src"
tar xzf "$tarball" -C "$dir/src" --strip-components=1
# Portable x86-64 AVX2 build: no -march=native (AMX kernels crash in sandboxes that refuse the
# AMX tile state), no web UI, no TLS, static libraries.
"$dir/tools/bin/cmake" -S "$dir/src/vendor/llama.cpp" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >&2
"$dir/tools/bin/cmake" --build "$dir/build" --target llama-server llama-bench -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" >&2
mkdir -p "$dir/bin"
# llama-bench beside it: the model bench's single-stream peer on the same model file.
cp "$dir/build/bin/llama-bench" "$dir/bin/llama-bench.part" && mv "$dir/bin/llama-bench.part" "$dir/bin/llama-bench"
cp "$dir/build/bin/llama-server" "$bin.part" && mv "$bin.part" "$bin"
rm -rf "$dir/build" "$dir/src"
echo "$bin"
