#!/usr/bin/env bash
# Where the llama-cpp-python wheel for this CPU and these build flags is kept, and the flags.
#   scripts/llama_wheel_dir.sh        prints the folder (run-tests' headless venv installs from it)
#   . scripts/llama_wheel_dir.sh      sets LLAMA_VERSION, CMAKE_ARGS (exported), LLAMA_KEY and
#                                     LLAMA_WHEELS for scripts/setup.sh, which builds the wheel
#
# llama-cpp-python is source-only on PyPI: set-up compiles llama.cpp (~8 min on 2 cores) into a
# wheel kept under ~/.cache/pagewise/wheels, keyed by version and build flags, so later set-ups
# (and clean clones) take seconds. Only the library is built (no tools/server).
# A portable x86-64-v3 build (AVX2, FMA, F16C), not -march=native: a native build on a VM whose
# CPU reports AMX used AMX instructions the VM does not enable (SIGILL on the first prompt of
# more than a few tokens), and native builds gave AVX-512 and AVX2 machines different numerics.
LLAMA_VERSION=0.3.36
LLAMA_BASE="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF"
LLAMA_CPU=""
if [ "$(uname -m)" = x86_64 ]; then
  if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo; then
    LLAMA_CPU="-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  else
    LLAMA_CPU="-DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"   # SSE only
  fi
fi
export CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_BASE $LLAMA_CPU}"
LLAMA_KEY=$(printf '%s %s' "$LLAMA_VERSION" "$CMAKE_ARGS" | sha256sum | cut -c1-12)
LLAMA_WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/pagewise/wheels/llama-$LLAMA_KEY"
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  printf '%s\n' "$LLAMA_WHEELS"
fi
