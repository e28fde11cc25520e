"""A chat request whose JSON holds a lone surrogate escape ("\\ud800"), sent to the real llama.cpp
worker: answered like any other text (it becomes U+FFFD). Before: HTTP 500 on /v1/chat/completions
and on /tokenize (no tokenizer encodes a lone surrogate)."""
from __future__ import annotations

import http.client
import json

import pytest

from app.worker.supervisor import Supervisor
from tests.worker.test_supervisor import real_spec

pytestmark = pytest.mark.slow


def post(spec, path: str, raw_json: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", spec.extra["port"], timeout=300)
    conn.request("POST", path, raw_json.encode("ascii"),
                 {"Content-Type": "application/json", "Authorization": f"Bearer {spec.api_key}"})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body


def test_a_lone_surrogate_in_a_request_is_text_not_a_server_error(tmp_path):
    sup = Supervisor(real_spec(tmp_path))
    sup.start()
    try:
        messages = '[{"role": "user", "content": "Say caf\\ud800 back to me."}]'
        status, body = post(sup.spec, "/tokenize", f'{{"messages": {messages}}}')
        assert status == 200 and body["count"] > 5, body
        status, body = post(sup.spec, "/v1/chat/completions", f'{{"messages": {messages}, "max_tokens": 4}}')
        assert status == 200 and body["choices"][0]["message"]["content"] is not None, body
    finally:
        sup.stop()
