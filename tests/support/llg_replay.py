"""Replay answers through llguidance exactly as vLLM's guidance backend builds it, without an
engine: vLLM's tokenizer loader, GuidanceBackend's LLTokenizer, serialize_guidance_grammar (with
the app's `disable_any_whitespace`), an LLMatcher and GuidanceGrammar.accept_tokens, token by token.

Runs with the Python that has vLLM (.venv-vllm); reads JSON on stdin:
    {"tokenizer": DIR, "schema": {...}, "answers": ["{...}", ...]}
and prints one JSON line: for each answer {"tokens": N, "accepted": K, "accepting": bool,
"error": "..."} — K == N and accepting (the grammar may end there) is what a valid answer gets.
"""
from __future__ import annotations

import json
import sys
import time


def main() -> int:
    job = json.load(sys.stdin)
    import llguidance
    from vllm.tokenizers.registry import get_tokenizer
    from vllm.v1.structured_output.backend_guidance import (GuidanceBackend, GuidanceGrammar,
                                                            serialize_guidance_grammar)
    from vllm.v1.structured_output.backend_types import StructuredOutputOptions

    tok = get_tokenizer(job["tokenizer"])
    began = time.perf_counter()
    ll_tok = GuidanceBackend._build_ll_tokenizer(tok, len(tok))
    grammar = serialize_guidance_grammar(StructuredOutputOptions.JSON, json.dumps(job["schema"]),
                                         disable_any_whitespace=True)
    built = time.perf_counter() - began
    out = []
    for answer in job["answers"]:
        matcher = llguidance.LLMatcher(ll_tok, grammar, log_level=1)
        g = GuidanceGrammar(ll_matcher=matcher, ll_tokenizer=ll_tok, vocab_size=len(tok))
        ids = tok.encode(answer, add_special_tokens=False)
        accepted = 0
        for token in ids:                   # one at a time, as the engine feeds them
            if not g.accept_tokens("replay", [token]):
                break
            accepted += 1
        out.append({"tokens": len(ids), "accepted": accepted, "accepting": matcher.is_accepting(),
                    "error": matcher.get_error() or "", "decoded": tok.decode(ids) == answer})
    print(json.dumps({"build_s": round(built, 3), "answers": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
