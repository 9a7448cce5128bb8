#!/usr/bin/env bash
# The CUDA toolkit from PyPI, for `make build-cuda` on a machine without one (and without a GPU).
#
#   scripts/cuda-env.sh DIR     install (once) into DIR and print the environment to build with
#
# DIR/py holds nvcc, the headers and the libraries candle links (cuBLAS, cuBLASLt, cuRAND, NVRTC)
# from NVIDIA's wheels, CUDA 13.0 (the toolkit of the H200 machines' driver 580). DIR/link holds
# the unversioned names the linker wants, and a stub libcuda.so (the driver's library, which comes
# with the GPU driver, not the toolkit): every function cudarc declares, answering CUDA_ERROR_NO_DEVICE, with the
# real library's soname, so the binaries load the driver's own libcuda.so.1 where there is a GPU.
# The printed lines are `export` statements: eval "$(scripts/cuda-env.sh DIR)".
set -euo pipefail
dir=${1:?usage: scripts/cuda-env.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
PY=${PYTHON:-python3}
CUDA_PKGS=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96
    nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-cublas==13.0.2.14 nvidia-curand==10.4.0.35)
stamp="$dir/.installed-$(printf '%s\n' "${CUDA_PKGS[@]}" | sha256sum | cut -c1-12)"
if [ ! -e "$stamp" ]; then
    rm -rf "$dir/py" "$dir/link" "$dir"/.installed-*
    echo "cuda-env: installing ${CUDA_PKGS[*]} into $dir/py" >&2
    "$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$dir/py" "${CUDA_PKGS[@]}" >&2
    touch "$stamp"
fi
root="$dir/py/nvidia/cu13"
[ -x "$root/bin/nvcc" ] || { echo "cuda-env: no nvcc under $root/bin" >&2; exit 2; }
if [ ! -e "$dir/link/libcuda.so" ]; then
    mkdir -p "$dir/link"
    for l in cublas cublasLt nvrtc curand cudart; do
        so=$(ls "$root/lib/lib$l.so."* 2>/dev/null | grep -E "lib$l\.so\.[0-9]+$" | head -1)
        [ -n "$so" ] || { echo "cuda-env: no lib$l.so.N under $root/lib" >&2; exit 2; }
        ln -sf "$so" "$dir/link/lib$l.so"
    done
    sys=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-*/src/driver/sys 2>/dev/null | sort -V | tail -1)
    [ -n "$sys" ] || { echo "cuda-env: cudarc's sources are not fetched (run cargo fetch first)" >&2; exit 2; }
    grep -ho 'pub unsafe fn cu[A-Za-z0-9_]*' "$sys"/*.rs | sort -u | sed 's/pub unsafe fn \(.*\)/int \1(void) { return 100; }/' > "$dir/link/libcuda-stub.c"
    gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$dir/link/libcuda.so" "$dir/link/libcuda-stub.c"
fi
echo "export CUDA_ROOT=$root CUDA_HOME=$root CUDA_PATH=$root"
echo "export PATH=$root/bin:\$PATH"
echo "export NVCC=$root/bin/nvcc"
echo "export LIBRARY_PATH=$dir/link\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
echo "export RUSTFLAGS=\"\${RUSTFLAGS:-} -L native=$dir/link\""
# the GPU's own architecture where there is one (cudaforge asks nvidia-smi), else Hopper's
command -v nvidia-smi >/dev/null || echo "export CUDA_COMPUTE_CAP=\${CUDA_COMPUTE_CAP:-90}"
