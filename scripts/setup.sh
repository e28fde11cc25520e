#!/usr/bin/env bash
# Idempotent set-up: system packages (CJK font, Qt's X/EGL libraries), the .venv, the app.
# Usage: scripts/setup.sh [--test]     (--test adds pytest, pytest-qt, import-linter)
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
missing=""
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $APT_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
  done
fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ]; then
    say "please install these system packages:$missing (continuing without them)"
  else
    say "installing system packages:$missing"
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null || say "apt-get failed: Chinese may render as boxes"
  fi
fi

# --- the virtual environment
STAMP_KEY=$(cat pyproject.toml scripts/setup.sh scripts/llama_wheel_dir.sh scripts/llama_selfcheck.py | sha256sum | cut -c1-16)
STAMP=".venv/.setup-${STAMP_KEY}${EXTRAS:+-test}"
if [ -f "$STAMP" ]; then exit 0; fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip wheel 2>&1 | grep -v "is ignored" || true

# llama-cpp-python's build flags, key and wheel folder (the why is in that script)
. scripts/llama_wheel_dir.sh
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
