#!/bin/bash
# Device side: build llama-cpp-python 0.3.36 with CUDA for Hopper (sm_90) from the trimmed source
# (/tmp/lcpst/llama_cpp_python-0.3.36, unpacked by app_steps.sh a) into /tmp/lcp, detached, since
# the build (~5 min on 16 cores) can outlast one command; `wait N` polls it for up to N seconds.
# The recipe this follows: ../shared/gpu-recipe/llamacpp-cuda (same flags).
# usage (repo root): bash benchmarks/gpu/lcp_build.sh start | wait N
S=/tmp/lcpst; SRC=$S/llama_cpp_python-0.3.36
case "${1:-start}" in
start)
  [ -d "$SRC" ] || { echo "no $SRC: run app_steps.sh a first"; exit 2; }
  cp "$0" $S/lcp_build.sh; rm -f $S/build.rc $S/build.end   # the sent tree is replaced by each command
  setsid nohup bash $S/lcp_build.sh run > $S/build.out 2>&1 < /dev/null &
  echo $! > $S/build.pid; echo "llama.cpp build started, pid $!"; exit 0 ;;
wait)
  MAX=${2:-400}; t0=$(date +%s)
  while [ ! -f $S/build.rc ]; do
    kill -0 "$(cat $S/build.pid 2>/dev/null)" 2>/dev/null || { sleep 1; [ -f $S/build.rc ] && break;
      echo "build not running"; tail -n 30 $S/build.log; exit 2; }
    (( $(date +%s) - t0 >= MAX )) && { echo "still building: $(grep -o '\[[0-9]*/[0-9]*\]' $S/build.log | tail -n 1)"; exit 1; }
    sleep 2
  done
  rc=$(cat $S/build.rc); echo "build exit code $rc after $(( $(cat $S/build.end) - $(cat $S/build.start) )) s"
  [ "$rc" = 0 ] || { grep -n -i -E "error|fatal" $S/build.log | head -n 20; exit 2; }
  exit 0 ;;
run) ;;
*) echo "usage: lcp_build.sh start | wait N"; exit 2 ;;
esac
OFF="-DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF"
if [ -n "$LCP_CPU" ]; then   # CPU only (~1 min on 16 cores instead of ~5): a stand-in on the GPU machine's CPU
  export CMAKE_ARGS="-DGGML_NATIVE=OFF $OFF"
else
  command -v nvcc > /dev/null || export PATH=/usr/local/cuda/bin:$PATH
  export CUDACXX=$(command -v nvcc)
  export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF $OFF"
fi
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
date +%s > $S/build.start
python3 -m pip install --no-build-isolation --no-deps --no-cache-dir --upgrade -v \
  --config-settings=build-dir=/tmp/lcpbuild --target /tmp/lcp "$SRC" > $S/build.log 2>&1
rc=$?
date +%s > $S/build.end; echo $rc > $S/build.rc
