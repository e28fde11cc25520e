"""What crosses the process boundary between the app and our llama.cpp worker (app.worker.llama).

The one app.worker module both sides import: the child writes these names and formats, the
parent (supervisor, client, runtime, engines/llamacpp.py; the status bar) reads them. Standard
library only, and no other app module (an import contract holds it), so importing it never drags
either side into the other.
"""
from __future__ import annotations

import re

MODULE = "app.worker.llama"             # `python -m app.worker.llama ARGS…` starts the worker

# Environment the parent sets for the child.
KEY_ENV = "PAGEWISE_WORKER_KEY"         # the API key (by environment: argv is visible to every user)
PARENT_PID_ENV = "PAGEWISE_PARENT_PID"  # the worker exits when this process is gone

# Output: every line the worker prints itself starts with this (llama.cpp's own lines do not).
LOG_PREFIX = "pagewise-worker:"

# While it reads a prompt, a streamed answer carries SSE comments `: prompt 1234/5000` (ignored
# by OpenAI clients): the window's "reading the passages: 45%", and a sign of life for stall
# deadlines.
PROGRESS_COMMENT = re.compile(r":\s*prompt (\d+)/(\d+)")


def progress_comment(done: int, total: int) -> bytes:
    return f": prompt {done}/{total}\n\n".encode()


# /metrics (Prometheus text format): every name starts with METRIC_PREFIX; these the app reads.
METRIC_PREFIX = "pagewise_"
KV_CACHE_USAGE = "pagewise_kv_cache_usage_ratio"        # 0..1 of the context in use
KV_CACHE_USED_CELLS = "pagewise_kv_cache_used_cells"    # tokens in the context now
PREFILL_TOKENS_PER_S = "pagewise_prefill_calibrated_tokens_per_second"   # --calibrate-tokens' result
PROMPT_PROGRESS_TOKENS = "pagewise_prompt_progress_tokens"               # of the prompt being read
PROMPT_PROGRESS_TOTAL = "pagewise_prompt_progress_total"
