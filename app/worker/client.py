"""OpenAI-compatible chat client for our llama.cpp worker, vLLM's server or a remote endpoint.

stdlib http.client rather than the `openai` package: we need the server root too (/health,
/metrics are not OpenAI API), cancellation that cuts a blocked read from another thread (Stop
button during a long prompt evaluation), our usage extension, one-line typed errors, and no
pydantic import on the start-up path. It always streams, so time-to-first-token is measured.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Iterator

from app.core.answer.loops import answer_body, closed_at_loop, looping
from app.worker import engine_errors as errors, protocol


@dataclass
class ChatResult:
    text: str
    ttft_s: float
    total_s: float
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    finish_reason: str      # "stop", "length", "loop" (the answer repeated itself: cut here), "error"
    cut: str = ""           # why the reply ended early (finish "error", "loop", "length"): one line
    passages: dict | None = None   # our worker, given a passage plan: {"read": K, "of": N, "measured_tps": X}
    first_odds: dict[str, float] | None = None   # asked with logprobs: the first token's likeliest, log-probability


class StreamError(errors.ServerError):
    """The engine sent an error event inside a stream (vLLM: the grammar gave up, the engine
    died …). `partial` is what it had streamed before it."""

    def __init__(self, message: str, said: str = "", partial: str = ""):
        super().__init__(message)
        self.said, self.partial = said, partial


_METRIC = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text → {name: value}; labelled series of one name are summed (vLLM labels by model)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _METRIC.match(line)
        if m and not line.startswith("#"):
            try:
                out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
            except ValueError:
                continue
    return out


def kv_cache_usage(metrics: dict[str, float]) -> float | None:
    """KV-cache use in 0..1 from our worker's or vLLM's /metrics (parsed {name: value}): the one
    reader for every engine. vLLM's older versions say gpu_cache_usage_perc; despite "perc",
    both vLLM names are fractions (1 = full)."""
    for name in (protocol.KV_CACHE_USAGE, "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"):
        value = metrics.get(name)
        if isinstance(value, (int, float)):
            return max(0.0, min(1.0, float(value)))
    return None


# What a reply's `cut` says (the answer's warning line) when it did not end by itself.
LOOP_CUT = "the answer began repeating itself and was ended there"
LENGTH_CUT = "the answer reached its token limit and was ended there"

STALL_S = 120.0           # default stall deadline: seconds without progress from the engine
CONNECT_S = 5.0           # connecting to a local or team endpoint takes milliseconds when it is up
# What one reply may hold: an endpoint that streams without end, or one 10 MB event, must not grow
# the app without bound. A token is rarely over 16 characters; the floor covers tiny max_tokens.
CHARS_PER_TOKEN_MAX, MIN_ANSWER_CHARS = 16, 16_384
MAX_LINE = 1 << 20        # one SSE line (one event): our worker's and vLLM's are well under 10 KB
MAX_BODY = 4 << 20        # a non-streamed reply (/tokenize, /metrics, /v1/models, an error body)
_PROGRESS = protocol.PROGRESS_COMMENT


class ChatClient:
    def __init__(self, base_url: str, api_key: str, model: str, timeout_s: float = STALL_S,
                 repeat_penalty: float = 1.0, connect_timeout_s: float = CONNECT_S, guard_loops: bool = False,
                 total_s: float | None = None):
        # timeout_s is a stall deadline, not a limit on the whole answer: the longest the engine
        # may send nothing (our worker sends a progress comment every slice of the prompt it
        # reads; a vLLM caller passes stall_s from the prompt's expected reading time)
        self.base_url, self.api_key, self.model, self.timeout_s = base_url.rstrip("/"), api_key, model, timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.total_s = total_s                  # a whole answer's limit (a remote endpoint's); None: none
        self.repeat_penalty = repeat_penalty    # the model's own (models.toml); 1.0 = none, not sent
        # engines without our worker's loop guard (vLLM, a remote endpoint): the stream reader
        # ends a JSON answer whose "answer" string repeats itself (app/core/answer/loops.py)
        self.guard_loops = guard_loops
        parts = urllib.parse.urlsplit(self.base_url)
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._prefix = parts.path                          # "/v1" usually
        self._root = self._prefix[:-3] if self._prefix.endswith("/v1") else self._prefix

    # --- public -------------------------------------------------------------------------------
    def chat(self, messages: list[dict], json_schema: dict | None = None, max_tokens: int = 512,
             temperature: float = 0.0, on_delta: Callable[[str], None] | None = None,
             cancel: threading.Event | None = None,
             on_progress: Callable[[int, int], None] | None = None,
             stall_s: float | None = None, passage_plan: dict | None = None,
             extra: dict | None = None) -> ChatResult:
        """One streamed answer. `on_progress(tokens read, prompt tokens)` from our worker's SSE
        comments while it reads the prompt; `stall_s` overrides the stall deadline;
        `passage_plan`: our worker's `pagewise_passages` (where the passages end, the deadline):
        sent only by callers that know the engine is our worker; `extra`: more request fields."""
        body = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                "temperature": temperature, "stream": True, "stream_options": {"include_usage": True}}
        body.update(self.request_fields())
        body.update(extra or {})
        if passage_plan is not None:
            body["pagewise_passages"] = passage_plan
        if json_schema is not None:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "answer", "schema": json_schema, "strict": True}}
        began = time.perf_counter()
        stall = stall_s or self.timeout_s
        conn = self._connection(self.connect_timeout_s)
        done = threading.Event()
        if cancel is not None:
            threading.Thread(target=self._cut_on_cancel, args=(conn, cancel, done), daemon=True).start()
        try:
            resp = self._send(conn, "POST", f"{self._prefix}/chat/completions", body, cancel, read_timeout_s=stall)
            guard = self.guard_loops and json_schema is not None
            limit = max(MIN_ANSWER_CHARS, max_tokens * CHARS_PER_TOKEN_MAX)
            return self._collect(self._events(resp, cancel, on_progress, stall), began, on_delta, cancel, guard,
                                 limit)
        finally:
            done.set()
            conn.close()

    def request_fields(self) -> dict:
        """Fields every chat request carries for this engine: here our llama.cpp worker's
        repetition penalty (engines that name it otherwise override this)."""
        return {"repeat_penalty": self.repeat_penalty} if self.repeat_penalty != 1.0 else {}

    def health(self) -> bool:
        """Our worker and vLLM answer /health: 200 is healthy, anything else is not (vLLM says 503
        once its EngineCore is dead, while /v1/models still answers 200). Only where /health does
        not exist (404: a remote endpoint) does /v1/models answering stand for health."""
        try:
            status, _ = self._get(f"{self._root}/health", timeout_s=3)
            if status != 404:
                return status == 200
            status, _ = self._get(f"{self._prefix}/models", timeout_s=3)
            return status == 200
        except errors.WorkerError:
            return False

    def metrics(self) -> dict[str, float]:
        status, data = self._get(f"{self._root}/metrics", timeout_s=5)
        if status != 200:
            raise errors.ServerError(f"{self._host}: /metrics answered HTTP {status}")
        return parse_metrics(data.decode("utf-8", errors="replace"))

    def count_tokens(self, messages: list[dict]) -> int:
        """Exact prompt tokens after the chat template (our worker and vLLM serve /tokenize).
        NotImplementedError where the server cannot count (no /tokenize, or one that does not
        count chat messages: a team server of another kind), so the caller estimates; any
        other failure (a dead or broken engine) is raised as the engine's error."""
        conn = self._connection(60)
        try:
            resp = self._send(conn, "POST", f"{self._root}/tokenize", {"model": self.model, "messages": messages})
            reply = _json_or_none(_read_bounded(resp))
            count = reply.get("count") if isinstance(reply, dict) else None
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise NotImplementedError(f"{self._where()}: /tokenize gave no token count")
            return count
        except errors.BadRequest as exc:
            if exc.status in (404, 405):
                raise NotImplementedError(f"{self._where()} has no /tokenize") from None
            raise
        except (OSError, http.client.HTTPException) as exc:
            raise self._broken(exc, None) from None
        finally:
            conn.close()

    def models(self) -> list[str]:
        return [str(m.get("id", "")) for m in self.model_list()]

    def model_list(self, timeout_s: float = 10) -> list[dict]:
        """The server's /models entries (id, and max_model_len where vLLM or our worker say it);
        an HTTP error raised as its WorkerError, a body that is not OpenAI-style JSON as ValueError."""
        status, data = self._get(f"{self._prefix}/models", timeout_s=timeout_s)
        self._raise_for(status, data)
        reply = _json_or_none(data)
        listed = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(listed, list):
            raise errors.ServerError(f"{self._where()}: /v1/models did not list models")
        return [m for m in listed if isinstance(m, dict)]

    # --- streaming ----------------------------------------------------------------------------
    def _events(self, resp: http.client.HTTPResponse, cancel, on_progress=None,
                stall_s: float | None = None) -> Iterator[dict]:
        """The stream's events, checked. The stall deadline runs on progress, not on bytes: a
        keep-alive comment every 20 s (or an event with nothing in it) does not reset it; answer
        text and our worker's reading progress do."""
        stall = stall_s or self.timeout_s
        began = last_progress = time.monotonic()
        last_said = None
        while True:
            now = time.monotonic()
            if now - last_progress > stall:
                raise errors.RequestTimeout(f"{self._where()} made no progress for {stall:.0f} s "
                                            "(the engine stalled)")
            if self.total_s is not None and now - began > self.total_s:
                raise errors.RequestTimeout(f"{self._where()} did not finish its answer within {self.total_s:.0f} s")
            try:
                raw = resp.readline(MAX_LINE + 1)
            except (OSError, http.client.HTTPException) as exc:
                raise self._broken(exc, cancel, stall_s) from None
            if not raw:
                if cancel is not None and cancel.is_set():
                    raise errors.Cancelled("cancelled")
                raise errors.WorkerDied(f"{self._where()} closed the stream before it finished")
            if len(raw) > MAX_LINE:
                raise errors.ServerError(f"{self._where()} sent an event over {MAX_LINE >> 20} MB")
            line = raw.decode("utf-8", errors="replace").strip()
            if line.startswith(":"):
                progress = _PROGRESS.match(line)
                if progress:
                    done, total = int(progress.group(1)), int(progress.group(2))
                    if (done, total) != last_said:
                        last_progress, last_said = time.monotonic(), (done, total)
                    if on_progress:
                        on_progress(done, total)
                continue
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                return
            event = _checked_event(_json_or_none(payload))
            if event is None:
                raise errors.ServerError(f"{self._where()} sent a malformed event") from None
            if "error" in event:
                said = _message(event)
                raise StreamError(f"{self._where()}: {said}", said)
            if any(c.get("delta", {}).get("content") or c.get("finish_reason") for c in event.get("choices", ())):
                last_progress = time.monotonic()
            yield event

    def _collect(self, events: Iterator[dict], began: float, on_delta, cancel, guard: bool = False,
                 limit: int = MIN_ANSWER_CHARS) -> ChatResult:
        """The streamed reply. An error event after some text keeps that text (finish "error",
        `cut` = the engine's words); before any text it is raised. With `guard`, a looping
        answer string ends the stream (finish "loop") and the reply is closed as JSON there.
        Past `limit` characters the reply ends there (finish "length"), as max_tokens would."""
        parts, ttft, finish, usage, cut, size, pieces = [], 0.0, "", {}, "", 0, 0
        odds = None
        try:
            for event in events:
                for choice in event.get("choices") or []:
                    if odds is None and choice.get("logprobs"):
                        odds = _first_odds(choice["logprobs"])
                    delta = (choice.get("delta") or {}).get("content") or ""
                    if delta:
                        ttft = ttft or time.perf_counter() - began
                        delta = delta[:limit - size]
                        size += len(delta)
                        parts.append(delta)
                        pieces += 1
                        if on_delta:
                            on_delta(delta)
                    finish = choice.get("finish_reason") or finish
                if size >= limit:
                    finish = "length"
                    break                  # closing the connection makes the engine stop generating
                usage = event.get("usage") or usage
                if cancel is not None and cancel.is_set():
                    raise errors.Cancelled("cancelled")
                if guard and _loops("".join(parts)):
                    parts, finish, cut = [closed_at_loop("".join(parts))], "loop", LOOP_CUT
                    break                  # closing the connection makes the engine stop generating
        except StreamError as exc:
            if not "".join(parts).strip():
                raise
            finish, cut = "error", exc.said or "the engine ended the reply with an error"
        if finish in ("length", "loop") and not cut:     # "loop": our llama.cpp worker's loop guard
            cut = LENGTH_CUT if finish == "length" else LOOP_CUT
        total = time.perf_counter() - began
        details = usage.get("prompt_tokens_details") or {}
        # a stream ended by us (a loop) or by an engine that reports no usage: one streamed piece
        # is one token on vLLM and our worker (a character split across tokens may join two)
        completion = int(usage.get("completion_tokens") or 0) or pieces
        return ChatResult("".join(parts), ttft or total, total, int(usage.get("prompt_tokens") or 0),
                          completion, int(details.get("cached_tokens") or 0),
                          finish or "stop", cut, usage.get("pagewise_passages"), odds)

    # --- HTTP plumbing ------------------------------------------------------------------------
    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=timeout_s)

    def _headers(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json",
                "Accept": "text/event-stream, application/json"}

    def _send(self, conn, method: str, path: str, body: dict | None, cancel=None,
              read_timeout_s: float | None = None) -> http.client.HTTPResponse:
        try:
            conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                         headers=self._headers())
            if read_timeout_s and conn.sock is not None:   # connected: now the stall deadline
                conn.sock.settimeout(read_timeout_s)
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            raise self._broken(exc, cancel, read_timeout_s) from None
        if resp.status != 200:
            try:
                said = _read_bounded(resp)
            except (OSError, http.client.HTTPException):
                said = b""
            self._raise_for(resp.status, said)
        return resp

    def _get(self, path: str, timeout_s: float) -> tuple[int, bytes]:
        conn = self._connection(timeout_s)
        try:
            conn.request("GET", path, headers=self._headers())
            resp = conn.getresponse()
            return resp.status, _read_bounded(resp)
        except (OSError, http.client.HTTPException) as exc:
            raise self._broken(exc, None) from None
        finally:
            conn.close()

    def _raise_for(self, status: int, data: bytes) -> None:
        if status == 200:
            return
        message = _message(_json_or_none(data)) or data[:200].decode("utf-8", errors="replace").strip()
        if status in (401, 403):
            raise errors.AuthFailed(f"{self._where()} refused the API key (HTTP {status})")
        if 400 <= status < 500:
            raise errors.BadRequest(f"{self._where()} rejected the request: {message}", status)
        if status == 503:
            raise errors.WorkerUnavailable(f"{self._where()} is not ready (HTTP 503)")
        raise errors.ServerError(f"{self._where()} failed (HTTP {status}): {message}")

    def _broken(self, exc: Exception, cancel, stall_s: float | None = None) -> errors.WorkerError:
        """Translate a socket-level failure into the one-line typed error the user sees."""
        if cancel is not None and cancel.is_set():
            return errors.Cancelled("cancelled")
        if isinstance(exc, (TimeoutError, socket.timeout)):
            return errors.RequestTimeout(f"{self._where()} sent nothing for {stall_s or self.timeout_s:.0f} s "
                                         "(the engine stalled)")
        if isinstance(exc, ConnectionRefusedError):
            return errors.WorkerUnavailable(f"no engine answers at {self._where()}")
        if isinstance(exc, socket.gaierror):
            return errors.WorkerUnavailable(f"cannot resolve {self._host}")
        if isinstance(exc, (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected,
                            http.client.IncompleteRead)):
            return errors.WorkerDied(f"{self._where()} dropped the connection (engine stopped or crashed)")
        return errors.WorkerUnavailable(f"{self._where()}: {exc}")

    @staticmethod
    def _cut_on_cancel(conn, cancel: threading.Event, done: threading.Event) -> None:
        """Unblock a read that may wait minutes for the first token: shut the socket on cancel."""
        while not done.is_set():
            if cancel.wait(0.05):
                sock = conn.sock
                if sock is not None and not done.is_set():
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return

    def _where(self) -> str:
        return f"{self._host}:{self._port}" if self._port else str(self._host)


def _loops(generated: str) -> bool:
    body = answer_body(generated)
    return body is not None and looping(body)


def _json_or_none(data: bytes | str):
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _read_bounded(resp: http.client.HTTPResponse, limit: int = MAX_BODY) -> bytes:
    data = resp.read(limit + 1)
    if len(data) > limit:
        raise errors.ServerError(f"the engine's reply is over {limit >> 20} MB")
    return data


def _first_odds(logprobs) -> dict[str, float] | None:
    """{token: log-probability} of the first token's likeliest, from OpenAI's `logprobs` of a
    choice (vLLM, our worker), or None where there are none or they are malformed."""
    try:
        top = logprobs["content"][0]["top_logprobs"]
        odds = {str(t["token"]): float(t["logprob"]) for t in top}
    except (TypeError, KeyError, IndexError, ValueError):
        return None
    return odds or None


def _checked_event(event) -> dict | None:
    """An OpenAI stream chunk as this client reads it, or None: an object whose choices are a
    list of objects with an object delta whose content is text, and whose usage is an object."""
    if not isinstance(event, dict):
        return None
    if "error" in event:
        return event
    choices = event.get("choices", [])
    if choices is None:
        choices = event["choices"] = []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        return None
    for choice in choices:
        if choice.get("delta") is None:
            choice["delta"] = {}
        delta = choice["delta"]
        if not isinstance(delta, dict) or not isinstance(delta.get("content") or "", str):
            return None
        if not isinstance(choice.get("finish_reason") or "", str):
            return None
    usage = event.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {} if isinstance(usage, dict) else None
    if not isinstance(usage, dict) or not isinstance(details, dict):
        return None
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens"), details.get("cached_tokens")]
    if not all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in counts):
        return None
    return event


def _message(obj) -> str:
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or "")[:300]
        return str(err)[:300]
    return ""
