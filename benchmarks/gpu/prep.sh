#!/bin/bash
# Device, call 1 of 3 (carry .whl/part00): stage bundle part 00, build the word-level tokenizer and
# the random-weight AWQ checkpoint with Qwen2.5-7B geometry and its real vocabulary (152064),
# and show which app modules import on the bare image (before our wheels are installed).
# usage (repo root): bash benchmarks/gpu/prep.sh
T0=$(date +%s); G=benchmarks/gpu
{
bash $G/stage.sh 00 || exit 3
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader
python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'total_GiB', round(torch.cuda.mem_get_info()[1]/2**30, 3))"
python3 $G/make_tokenizer.py /tmp/tok152 152064
python3 $G/make_awq_model.py /tmp/model152 /tmp/tok152 --vocab 152064
PAGEWISE_HOME=/tmp/pw-home python3 $G/check_imports.py
echo "prep took $(( $(date +%s) - T0 )) s"
} 2>&1 | tee $OUT/prep.txt
