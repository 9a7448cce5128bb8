#!/usr/bin/env bash
# The engine's kernels on ARM (aarch64), without an ARM machine: cross-compiled with Debian's
# aarch64 gcc and run under qemu-user. Every kernel's NEON forms (with and without `dotprod`)
# against the scalar reference bit for bit, and a tiny model's tokens at every level. Twice: on
# qemu's default CPU (NEON and dotprod) and on a Cortex-A53 (NEON only), where the detected level
# must be `neon`. Installs what is missing (gcc-aarch64-linux-gnu, qemu-user, the Rust target).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=aarch64-unknown-linux-gnu
pkgs=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
rustup target list --installed | grep -qx "$target" || rustup target add "$target" >&2
runner="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$runner" SPADE_TEST_RUNNER="$runner"
tests=(--lib kernels::)
engine=(--test engine every_kernel_level_generates_the_same_tokens)
start=$(date +%s)
echo "== qemu's default CPU (NEON + dotprod)" >&2
SPADE_TEST_EXPECT_ISA=dotprod cargo test --target "$target" -p spade-model "${tests[@]}"
cargo test --target "$target" -p spade-model "${engine[@]}"
echo "== Cortex-A53 (NEON only)" >&2
QEMU_CPU=cortex-a53 SPADE_TEST_EXPECT_ISA=neon cargo test --target "$target" -p spade-model "${tests[@]}"
QEMU_CPU=cortex-a53 cargo test --target "$target" -p spade-model "${engine[@]}"
echo "test-arm: passed in $(( $(date +%s) - start )) s (after the build)" >&2
