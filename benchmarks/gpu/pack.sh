#!/bin/bash
# Local side (needs pip + internet, any x86-64 or arm64 Linux): build the wheel bundle
# for the GPU machine and split it into parts small enough to send with one command each.
# usage (from the repo root): bash benchmarks/gpu/pack.sh
# writes: .whl/partNN (git-ignored), benchmarks/gpu/parts.txt, benchmarks/gpu/bundle.sha256
set -e
R=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$R/../.." && pwd)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
PLAT="--python-version 3.12 --implementation cp"
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64 manylinux_2_35_x86_64; do
  PLAT="$PLAT --platform $p"; done
mkdir -p "$W/b" "$W/rec/vllm-0.26.0.dist-info"
python3 -m pip download -q --no-deps --only-binary=:all: $PLAT -d "$W/b" $(cat "$R/wheels.txt")
V=$(ls "$W"/b/vllm-0.26.0-*.whl)
# Drop what a dense model on Hopper does not load: FA2 (FA3 is used on sm90), the Rust
# frontend binary (off unless VLLM_USE_RUST_FRONTEND=1) and the MoE kernels.
DROP='vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so vllm/vllm-rs vllm/_moe_C_stable_libtorch.abi3.so'
zip -q -d "$V" $DROP
unzip -p "$V" vllm-0.26.0.dist-info/RECORD | grep -v "_vllm_fa2_C.abi3.so\|^vllm/vllm-rs,\|_moe_C_stable_libtorch" \
  > "$W/rec/vllm-0.26.0.dist-info/RECORD"
(cd "$W/rec" && zip -q "$V" vllm-0.26.0.dist-info/RECORD)
(cd "$W/b" && tar cf "$W/bundle.tar" *.whl)
(cd "$W" && sha256sum bundle.tar) > "$R/bundle.sha256"
mkdir -p "$ROOT/.whl"; rm -f "$ROOT"/.whl/part*
split -b 44M -d "$W/bundle.tar" "$ROOT/.whl/part"
(cd "$ROOT/.whl" && for f in part*; do echo "${f#part} $(stat -c%s $f)"; done) > "$R/parts.txt"
echo "bundle $(stat -c%s "$W/bundle.tar") bytes, $(ls "$W"/b | wc -l) wheels"; cat "$R/parts.txt" "$R/bundle.sha256"
