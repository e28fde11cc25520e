"""Streaming OpenAI-API client: TTFT and decode tokens/s for a long prompt, then TTFT for
a second prompt sharing the same prefix (prefix-cache hit).

Prompts are lists of token ids (exact lengths); with random weights the output is noise.
usage: python3 bench_client.py BASE_URL API_KEY MODEL [PREFIX_TOKENS] [OUT_TOKENS] [VOCAB]
(BASE_URL is the server root, without /v1.)  Importable: measure(...) returns the results.
"""
from __future__ import annotations

import json
import random
import sys
import time

import httpx


def _stream(base: str, key: str, model: str, prompt: list[int], max_tokens: int, label: str) -> dict:
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    t0 = time.perf_counter()
    t_first = t_last = None
    chunks, usage = 0, None
    with httpx.Client(timeout=600) as c:
        with c.stream("POST", base + "/v1/completions", json=body,
                      headers={"Authorization": "Bearer " + key}) as r:
            r.raise_for_status()
            for line in r.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                d = json.loads(line[6:])
                usage = d.get("usage") or usage
                if d.get("choices"):
                    now = time.perf_counter()
                    t_first = t_first or now
                    t_last = now
                    chunks += 1
    ntok = usage["completion_tokens"] if usage else chunks
    # decode rate over the tokens after the first: the first one's time is the TTFT
    dec = (ntok - 1) / (t_last - t_first) if ntok > 1 and t_last > t_first else None
    res = {"label": label, "prompt_tokens": usage and usage["prompt_tokens"],
           "completion_tokens": ntok, "ttft_s": round(t_first - t0, 4),
           "decode_tok_per_s": dec and round(dec, 1), "total_s": round(t_last - t0, 3)}
    print("BENCH", json.dumps(res), flush=True)
    return res


def measure(base: str, key: str, model: str, n_prefix: int = 30000, n_out: int = 256,
            vocab: int = 49152) -> list[dict]:
    """Warm-up, cold long prompt, then two follow-ups sharing its prefix (+50 new tokens each)."""
    rng = random.Random(0)
    ids = lambda n: [rng.randrange(100, vocab - 100) for _ in range(n)]   # noqa: E731
    prefix = ids(n_prefix)
    return [_stream(base, key, model, ids(32), 8, "warmup"),
            _stream(base, key, model, prefix, n_out, f"cold_{n_prefix}"),
            _stream(base, key, model, prefix + ids(50), n_out, f"prefix_hit_{n_prefix}+50"),
            _stream(base, key, model, prefix + ids(50), 1, f"prefix_hit_{n_prefix}+50_ttft_only")]


if __name__ == "__main__":
    a = sys.argv
    measure(a[1], a[2], a[3], int(a[4]) if len(a) > 4 else 30000, int(a[5]) if len(a) > 5 else 256,
            int(a[6]) if len(a) > 6 else 49152)
