"""Device-side helpers for bench_plan.py: start a vLLM server from an argv, wait for it, read its
log and /metrics, stop it by process group. (The recipe's serve.sh, in Python.)"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

# What vLLM logs about backends, memory and the KV cache (serve.sh's grep).
KV_DONE = re.compile(r"Maximum concurrency|estimated maximum model length|Auto-fit|fits in|"
                     r"KV cache is needed")
INTERESTING = re.compile(
    r"Using .*[Bb]ackend|attention backend|quantization|Model loading took|Available KV cache memory|"
    r"GPU KV cache size|Maximum concurrency|Auto-fit|fits|estimated maximum|torch.compile took|"
    r"Compil.*took|Graph capturing finished|init engine|CUDA graph|[Mm]arlin|[Mm]achete|max_model_len|"
    r"ValueError|Error|chunked|prefix caching|rope|yarn|YaRN")


def device_total_bytes() -> int:
    """Total GPU memory as vLLM sees it (cudaMemGetInfo), read in a child so that no CUDA
    context stays behind in this process."""
    code = "import torch; print(torch.cuda.mem_get_info()[1])"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout.split()[-1])


def gpu_used_mib() -> int | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout
        return int(out.split()[0])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def gpu_apps() -> list[str]:
    """Per-process GPU memory ('pid, name, MiB'), to split the footprint between processes."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout
        return [line.strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        return []


def kv_lines(log: Path, limit: int = 45) -> list[str]:
    seen, lines = set(), []
    for line in log.read_text(errors="replace").splitlines():
        if not INTERESTING.search(line):
            continue
        text = re.sub(r"^\(\w+ pid=\d+\) ", "", line)[:400]
        key = re.sub(r"^.*?\] ", "", text)
        if key not in seen:
            seen.add(key)
            lines.append(text)
    return lines[:limit]


class Server:
    def __init__(self, argv: list[str], env: dict, log: Path):
        self.log, self.t0, self.ready_s = log, time.time(), None
        self._fh = open(log, "w")
        # new session: the engine core is a child of the API server; stop() kills the group
        self.proc = subprocess.Popen(argv, env={**os.environ, **env}, stdout=self._fh,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, root: str, key: str, max_s: float, stop_at: str = "ready") -> str:
        """'ready' (health 200 and /v1/models answers), 'kv_logged', 'exited' or 'timeout'."""
        import httpx  # device image has it; the app's .venv (--dry) need not
        hdr = {"Authorization": "Bearer " + key}
        while time.time() - self.t0 < max_s:
            if self.proc.poll() is not None:
                return "exited"
            if stop_at == "kv" and KV_DONE.search(self.log.read_text(errors="replace")):
                self.ready_s = round(time.time() - self.t0, 1)
                return "kv_logged"
            try:
                if httpx.get(root + "/health", timeout=2).status_code == 200 and \
                        httpx.get(root + "/v1/models", headers=hdr, timeout=5).status_code == 200:
                    self.ready_s = round(time.time() - self.t0, 1)
                    return "ready"
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        return "timeout"

    def metrics(self, root: str, key: str) -> dict:
        """The /metrics series the app reads (KV gauge) and prefix-cache counters."""
        import httpx
        text = httpx.get(root + "/metrics", headers={"Authorization": "Bearer " + key}, timeout=10).text
        found: dict = {}
        for line in text.splitlines():
            m = re.match(r"(vllm:(?:kv_cache_usage_perc|gpu_cache_usage_perc|prefix_cache_queries|prefix_cache_hits))"
                         r"(?:_total)?(?:\{[^}]*\})? ([0-9.e+-]+)$", line)
            if m:
                found[m.group(1)] = found.get(m.group(1), 0.0) + float(m.group(2))
        return found

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=25)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self._fh.close()
        time.sleep(1)          # let the driver release the memory before the next start
