#!/usr/bin/env bash
# Idempotent set-up: system packages (CJK font, Qt's X/EGL libraries), the .venv, the app.
# Usage: scripts/setup.sh [--test]     (--test adds pytest, pytest-qt, import-linter, ruff)
# Fast when nothing changed: a stamp keyed by pyproject.toml + this script skips the work.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EXTRAS=""
[ "${1:-}" = "--test" ] && EXTRAS="[test]"
PY=${PAGEWISE_PYTHON:-python3}
say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# --- system packages (Debian/Ubuntu): a CJK font so Chinese renders; Qt's runtime libraries.
APT_PKGS="fonts-wqy-microhei fontconfig libegl1 libgl1 libxkbcommon0 libdbus-1-3 libfontconfig1"
# Qt's xcb platform plugin (the window on X11): the packages behind `ldd` of PySide6's
# plugins/platforms/libqxcb.so and libQt6XcbQpa.so.6 (tests/qt/test_xcb_packages.py keeps this true).
# Without libxcb-cursor0 Qt aborts at start: "no Qt platform plugin could be initialized".
XCB_PKGS="libx11-6 libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-glx0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
  libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1
  libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0"
APT_PKGS="$APT_PKGS $XCB_PKGS"
# OCR of scanned pages (app/core/documents/ocr.py): Tesseract with English and Simplified Chinese,
# run as a subprocess (no Python dependency; unlike onnxruntime-based OCR it opens no network connection).
APT_PKGS="$APT_PKGS tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim"
# The test set-up: a real X server and tools to find, photograph and close the window (tests/qt/test_xvfb_window.py)
[ -n "$EXTRAS" ] && APT_PKGS="$APT_PKGS xvfb xdotool imagemagick x11-utils"
# ... and the network audit (tests/e2e/test_network_audit.py): strace of every process, `ip` for loopback in `unshare -n`
[ -n "$EXTRAS" ] && APT_PKGS="$APT_PKGS strace iproute2"
missing=""
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $APT_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
  done
fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ]; then
    say "please install these system packages (continuing without them): apt-get install$missing (as root)"
  else
    say "installing system packages:$missing"
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null || say "apt-get failed; please install:$missing (without them Chinese may render as boxes, the window may not open)"
  fi
fi

# --- llama.cpp on an NVIDIA GPU (issue 21): the plan offloads layers to the GPU only if
# llama-cpp-python is built with CUDA, which needs the CUDA toolkit's compiler (nvcc). Built for
# the card(s) in this machine only (CMAKE_CUDA_ARCHITECTURES=native): ~5 min on 16 cores for one
# architecture on the H200 machine, longer on fewer cores. PAGEWISE_LLAMA_CUDA=0 keeps the CPU build.
LLAMA_CUDA_ARGS=""
USER_CMAKE_ARGS="${CMAKE_ARGS-}"
if [ "${PAGEWISE_LLAMA_CUDA:-1}" != 0 ] && [ -z "$USER_CMAKE_ARGS" ] && nvidia-smi -L >/dev/null 2>&1; then
  NVCC=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
  if [ -n "$NVCC" ]; then
    say "NVIDIA GPU and CUDA toolkit found ($("$NVCC" --version | grep -o 'release [0-9.]*')): llama.cpp will be built with CUDA for GPU offload"
    export CUDACXX="$NVCC"
    LLAMA_CUDA_ARGS="-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native -DGGML_CUDA_NCCL=OFF -DLLAVA_BUILD=OFF"
  else
    say "NVIDIA GPU found but no CUDA toolkit (nvcc): llama.cpp is built for the CPU only, so a plan's GPU layers run on the CPU (pagewise doctor says so). For GPU offload install the CUDA toolkit (e.g. apt install nvidia-cuda-toolkit) and run set-up again; vLLM (pagewise[gpu]) needs no toolkit."
  fi
fi

# --- the virtual environment
STAMP_KEY=$(cat pyproject.toml scripts/setup.sh scripts/llama_wheel_dir.sh scripts/llama_selfcheck.py | sha256sum | cut -c1-16)
STAMP=".venv/.setup-${STAMP_KEY}${EXTRAS:+-test}"
[ -n "$LLAMA_CUDA_ARGS" ] && STAMP="$STAMP-cuda"      # a toolkit installed later builds again
if [ -f "$STAMP" ]; then exit 0; fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip wheel 2>&1 | grep -v "is ignored" || true

# llama-cpp-python's build flags, key and wheel folder (the why is in that script)
. scripts/llama_wheel_dir.sh
if [ -n "$LLAMA_CUDA_ARGS" ]; then    # the CUDA build has its own key and wheel folder
  export CMAKE_ARGS="$CMAKE_ARGS $LLAMA_CUDA_ARGS"
  LLAMA_KEY=$(printf '%s %s' "$LLAMA_VERSION" "$CMAKE_ARGS" | sha256sum | cut -c1-12)
  LLAMA_WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/pagewise/wheels/llama-$LLAMA_KEY"
fi
if [ ! -f ".venv/.llama-$LLAMA_KEY" ]; then
  if ! ls "$LLAMA_WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    say "building llama-cpp-python $LLAMA_VERSION (compiles llama.cpp: about 8 minutes on 2 cores, once)"
    rm -rf "$LLAMA_WHEELS.part" && mkdir -p "$LLAMA_WHEELS.part"
    # --no-cache-dir: pip's own wheel cache is keyed by the download, not by CMAKE_ARGS
    .venv/bin/python -m pip wheel -v --no-deps --no-cache-dir -w "$LLAMA_WHEELS.part" \
        "llama-cpp-python==$LLAMA_VERSION" 2>&1 | .venv/bin/python -u scripts/build_progress.py >&2 || true
    ls "$LLAMA_WHEELS.part"/llama_cpp_python-*.whl >/dev/null 2>&1 || { say "llama-cpp-python failed to build"; exit 1; }
    rm -rf "$LLAMA_WHEELS" && mv "$LLAMA_WHEELS.part" "$LLAMA_WHEELS"
  fi
  .venv/bin/python -m pip uninstall -q -y llama-cpp-python >/dev/null 2>&1 || true
  .venv/bin/python -m pip install -q --only-binary llama-cpp-python --find-links "$LLAMA_WHEELS" \
      "llama-cpp-python==$LLAMA_VERSION" 2>&1 | grep -v "is ignored" >&2 || true
  .venv/bin/python -c "import llama_cpp" || { say "llama-cpp-python failed to install"; exit 1; }
  rm -f .venv/.llama-* && touch ".venv/.llama-$LLAMA_KEY"
fi
say "installing Pagewise$EXTRAS and its dependencies"
.venv/bin/python -m pip install -q -e ".$EXTRAS" 2>&1 | grep -v "is ignored" >&2 || true
.venv/bin/python -c "import app.core.models.catalogue, pymupdf, llama_cpp" || { say "install failed"; exit 1; }
# The build must run on this CPU: evaluate a short prompt with the embedded model (a build with
# instructions the CPU or VM lacks dies here with SIGILL, not in the middle of a question).
.venv/bin/python scripts/llama_selfcheck.py >&2 || { say "llama.cpp does not run on this CPU: set CMAKE_ARGS (see README, Troubleshooting)"; rm -f .venv/.llama-*; exit 1; }
rm -f .venv/.setup-*
touch "$STAMP"
say "ready"
