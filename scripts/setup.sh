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
STAMP_KEY=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
STAMP=".venv/.setup-${STAMP_KEY}${EXTRAS:+-test}"
if [ -f "$STAMP" ]; then exit 0; fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip wheel 2>&1 | grep -v "is ignored" || true

# llama-cpp-python is source-only on PyPI: the first build compiles llama.cpp (~8 min on 2 cores);
# pip caches the wheel, so later set-ups take seconds. Only the library is built (no tools/server).
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF}"
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  say "building llama-cpp-python (compiles llama.cpp: about 8 minutes on 2 cores the first time)"
  .venv/bin/python -m pip install -v "llama-cpp-python==0.3.36" 2>&1 \
    | grep --line-buffered -E '^\s*\[ *[0-9]+%\]|Successfully|ERROR|error:' \
    | sed -u -E 's/^\s*\[ *([0-9]+)%\].*/  llama.cpp build: \1%/' | uniq >&2 || true
  .venv/bin/python -c "import llama_cpp" || { say "llama-cpp-python failed to build"; exit 1; }
fi
say "installing Pagewise$EXTRAS and its dependencies"
.venv/bin/python -m pip install -q -e ".$EXTRAS" 2>&1 | grep -v "is ignored" || true
.venv/bin/python -c "import app.core.models, pymupdf, llama_cpp" || { say "install failed"; exit 1; }
rm -f .venv/.setup-*
touch "$STAMP"
say "ready"
