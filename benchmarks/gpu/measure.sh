#!/bin/bash
# Device, call 3 of 3 (carry .whl/part02): stage the last part, install the wheels to /tmp/site,
# then run bench_plan.py: the app's own plan and vLLM command line for a 24 GB RTX 4090 and a
# 16 GB RTX 4080, budgets scaled to this GPU, benchmark and probe. Logs and results.json in $OUT.
# usage (repo root): bash benchmarks/gpu/measure.sh [extra bench_plan.py args]
T0=$(date +%s); G=benchmarks/gpu
set -o pipefail
{
bash $G/stage.sh 02 || exit 3
bash $G/install.sh || exit 4
export PYTHONPATH=/tmp/site PAGEWISE_HOME=/tmp/pw-home PYTHONUNBUFFERED=1
python3 $G/check_imports.py || exit 5
left=$(( 550 - ($(date +%s) - T0) ))
python3 $G/bench_plan.py --model /tmp/model152 --out $OUT --seconds $left "$@"
echo "measure took $(( $(date +%s) - T0 )) s"
} 2>&1 | tee $OUT/summary.txt
