#!/usr/bin/env bash
# System packages the tests and benches need, installed only when missing (Debian/Ubuntu, as root
# or with sudo). Listed in one place:
#   python3-torch         the independent PyTorch implementation the GRPO loss is checked against
#   libopenblas0-pthread  a real BLAS: the f32 linear layers run on it (crates/spade-model/src/blas.rs), and so does the PyTorch peer in `make bench`
#   bubblewrap            an extra sandbox layer, used when present (the mandatory layers work without it)
set -euo pipefail
pkgs=(python3-torch libopenblas0-pthread bubblewrap)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
