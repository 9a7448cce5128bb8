# The pinned llama.cpp sources, vendored in llama-cpp-python's source distribution on PyPI:
# sourced by scripts/llama-server.sh (which builds llama-server and llama-bench from them) and
# scripts/torch-venv.sh (which takes llama.cpp's checkpoint converter from them).
#   llama_version   the pinned llama-cpp-python version
#   llama_tarball DIR   download (once, checksum-verified) DIR/llama_cpp_python-VERSION.tar.gz and
#                       print its path; a one-line error and status 1 on failure
llama_version=0.3.36
llama_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

llama_tarball() {
  local dir="$1" tarball url
  tarball="$dir/llama_cpp_python-$llama_version.tar.gz"
  if ! echo "$llama_sha256  $tarball" | sha256sum -c --status 2>/dev/null; then
    mkdir -p "$dir"
    url=$(curl -fsSL https://pypi.org/simple/llama-cpp-python/ | grep -o "https://[^\"#]*llama_cpp_python-$llama_version.tar.gz" | head -1)
    [[ -n "$url" ]] || { echo "llama-cpp-sources.sh: llama-cpp-python $llama_version sdist not found on PyPI" >&2; return 1; }
    curl -fsSL -o "$tarball.part" "$url"
    echo "$llama_sha256  $tarball.part" | sha256sum -c --status || { echo "llama-cpp-sources.sh: checksum mismatch for $url" >&2; return 1; }
    mv "$tarball.part" "$tarball"
  fi
  echo "$tarball"
}
