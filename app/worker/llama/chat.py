"""One chat completion on a llama_cpp.Llama: template → tokens → prefix reuse → generate.

Why our own loop instead of Llama.create_chat_completion: we need to know how many prompt
tokens were reused (usage.prompt_tokens_details.cached_tokens), to restore/save KV state on
disk around the prompt evaluation, to honour json_schema (the bundled handler ignores it), and
to stop between prompt batches when the client goes away.
"""
from __future__ import annotations

import codecs
import hashlib
import json
import random
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterator

import llama_cpp
import numpy as np
from llama_cpp import llama_chat_format
from llama_cpp.llama_grammar import (
    JSON_GBNF,
    BuiltinRule,
    LlamaGrammar,
    SchemaConverter,
)

from app.worker.llama.kv_store import KvStore, common_prefix
from app.worker.llama.loop_guard import AnswerLoopGuard

GRAMMARS_CACHE = 4        # compiled answer grammars kept (each prompt's quotes make its own schema)
TOKENS_CACHE = 4          # tokenized prompts kept (a /tokenize, then the chat with the same messages)
MIN_SLICE = 64            # smaller slices re-read the weights too often: a slow machine got slower still
SLICE_S = 1.0             # seconds of prompt reading between progress reports and cancel checks
MAX_TOP_LOGPROBS = 20      # OpenAI's own limit on top_logprobs
EARLY_CHARS = 4096        # prompt text tokenized to recognise a stored document before the whole prompt is


class RequestError(ValueError):
    """The request is invalid (HTTP 400); the message goes back to the client."""


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    restored_tokens: int = 0     # of cached_tokens, how many came from the disk store
    prompt_s: float = 0.0
    generate_s: float = 0.0
    finish_reason: str = "stop"
    passages_read: int = 0       # with a passage plan: the passages kept (of passages_total)
    passages_total: int = 0
    measured_tps: float = 0.0    # the prefill speed this reading measured (a plan's cut needs it)
    top_logprobs: list = field(default_factory=list)    # the first token's likeliest: (text, logprob)


@dataclass(frozen=True)
class PassagePlan:
    """`pagewise_passages` in a request (ignored by other engines): the last message ends with
    ranked passages then a closing part (the question). `ends`: character offsets in that
    message where each passage ends; `tail`: where the closing part begins; `deadline_s`:
    the prompt must be read this long after the request came. Behind plan, the prompt is cut
    after the last passage that still fits, and the closing part follows it."""
    ends: tuple[int, ...]
    tail: int
    deadline_s: float

    @classmethod
    def from_request(cls, body: dict) -> "PassagePlan | None":
        raw = body.get("pagewise_passages")
        if not isinstance(raw, dict):
            return None
        try:
            ends, tail, deadline = tuple(int(e) for e in raw["ends"]), int(raw["tail"]), float(raw["deadline_s"])
        except (KeyError, TypeError, ValueError):
            raise RequestError("pagewise_passages needs 'ends' (offsets), 'tail' and 'deadline_s'") from None
        if not ends or list(ends) != sorted(ends) or ends[-1] > tail or ends[0] <= 0 or deadline <= 0:
            raise RequestError("pagewise_passages: 'ends' must rise, end before 'tail', and the deadline be > 0")
        return cls(ends, tail, deadline)

    def cut(self, messages: list[dict], kept: int) -> list[dict]:
        """The messages with only the first `kept` passages, the closing part kept."""
        content = messages[-1]["content"]
        return messages[:-1] + [{**messages[-1], "content": content[:self.ends[kept - 1]] + content[self.tail:]}]


@dataclass
class Params:
    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 0.95
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    schema: dict | None = None
    repeat_penalty: float = 1.0
    passages: PassagePlan | None = None
    top_logprobs: int = 0       # OpenAI's `logprobs` + `top_logprobs`: given for the first token only

    @classmethod
    def from_request(cls, body: dict) -> "Params":
        stop = body.get("stop") or []
        temperature = body.get("temperature")       # absent → greedy: answers must be reproducible
        schema = schema_of(body.get("response_format"))
        try:
            return cls(max_tokens=int(body.get("max_tokens") or body.get("max_completion_tokens") or 512),
                       temperature=float(temperature) if temperature is not None else 0.0,
                       top_p=float(body.get("top_p") or 0.95), seed=body.get("seed"),
                       stop=[stop] if isinstance(stop, str) else list(stop),
                       schema=schema,
                       repeat_penalty=float(body.get("repeat_penalty") or 1.0),
                       passages=PassagePlan.from_request(body),
                       top_logprobs=min(MAX_TOP_LOGPROBS, max(0, int(body.get("top_logprobs") or 0)))
                       if body.get("logprobs") else 0)
        except (TypeError, ValueError) as exc:
            raise RequestError(f"invalid sampling parameter: {exc}") from None


def schema_of(fmt: dict | None) -> dict | None:
    """Accept OpenAI's json_schema form and llama.cpp's json_object+schema form; {} = any JSON."""
    if not fmt or fmt.get("type") == "text":
        return None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise RequestError("response_format.json_schema.schema must be an object")
        return schema
    if fmt.get("type") == "json_object":
        return fmt.get("schema") or {}
    raise RequestError(f"unsupported response_format type {fmt.get('type')!r}")


class ChatEngine:
    """Owns the Llama instance. chat() calls are serialised by the caller holding `lock`, which
    an early disk restore (prompt_tokens) takes too: llama.cpp contexts are not thread-safe."""

    def __init__(self, llm: llama_cpp.Llama, store: KvStore | None = None, batch: int = 128):
        # Prompt evaluated in slices of `batch`: measured as fast as 512 on CPU, and a Stop or a
        # closed connection is noticed 4× sooner; /metrics shows the progress between slices.
        self.llm, self.store, self.batch = llm, store, batch
        self.lock = threading.Lock()
        self._disk_tokens = 0             # leading tokens in memory an early restore put there, unused yet
        self._memory_head: str | None = None   # prompt text (EARLY_CHARS) whose tokens lead the memory
        self.progress = (0, 0)            # (prompt tokens evaluated, to evaluate) of the running request
        self.measured_prefill_tps = 0.0   # --calibrate-tokens at start (0: not measured)
        self._format = _formatter(llm)
        self._eos = {llm.token_eos()}
        self._grammars: OrderedDict[str, LlamaGrammar] = OrderedDict()
        self._tokens_cache: OrderedDict[str, tuple[tuple[int, ...], tuple[str, ...], str]] = OrderedDict()
        self._tokens_lock = threading.Lock()   # /tokenize runs outside the generation lock

    def tokens_for(self, messages: list[dict]) -> tuple[list[int], list[str]]:
        """Chat template → token ids and the template's stop strings."""
        tokens, stops, _ = self._prompt(messages)
        return list(tokens), list(stops)

    def _prompt(self, messages: list[dict], result=None) -> tuple[tuple[int, ...], tuple[str, ...], str]:
        """Token ids, stop strings and the prompt's first EARLY_CHARS characters. The last few
        results are kept: a client sizes its prompt with /tokenize and then sends the same
        messages (~15 ms to tokenize a 5K-token document on 2 cores, paid once instead of
        twice). `result`: the template already applied by the caller."""
        try:
            key = hashlib.sha1(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        except (TypeError, ValueError):          # not JSON-able: the template will say what is wrong
            key = None
        with self._tokens_lock:
            hit = self._tokens_cache.get(key) if key else None
            if hit is not None:
                self._tokens_cache.move_to_end(key)
                return hit
        if result is None:
            try:
                result = self._format(messages=messages)
            except Exception as exc:  # jinja errors, bad roles...
                raise RequestError(f"cannot apply the chat template: {exc}") from None
        tokens = self.llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special,
                                   special=True)
        stops = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
        entry = (tuple(tokens), tuple(s for s in stops if s), result.prompt[:EARLY_CHARS])
        if key:
            with self._tokens_lock:
                self._tokens_cache[key] = entry
                while len(self._tokens_cache) > TOKENS_CACHE:
                    self._tokens_cache.popitem(last=False)
        return entry

    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        """The prompt's tokens, for /tokenize. A client sizes its prompt just before sending it:
        when the disk store holds the prompt's document and memory does not (a restarted worker,
        another document), its restore starts now on another thread, while this one tokenizes
        (measured: restore ~30 ms and tokenizing ~12 ms of a 5.4K-token prompt take ~30 ms side
        by side instead of ~42 ms in a row). The chat request then finds the document in memory."""
        result = None
        if self.store is not None:
            try:
                result = self._format(messages=messages)
            except Exception:  # a bad request: _prompt answers it
                result = None
            if result is not None and result.prompt[:EARLY_CHARS] != self._memory_head:   # else: a follow-up
                threading.Thread(target=self._restore_early, args=(result,), name="kv-restore", daemon=True).start()
        return list(self._prompt(messages, result)[0])

    def _restore_early(self, result) -> None:
        head = self.llm.tokenize(result.prompt[:EARLY_CHARS].encode("utf-8"), add_bos=not result.added_special,
                                 special=True)
        if len(result.prompt) > EARLY_CHARS:
            head = head[:-8]               # text cut mid-word: its last tokens may differ in the whole prompt
        best = self.store.best(head)
        if best is None or best.common <= 64 or not self.lock.acquire(blocking=False):
            return                         # nothing stored for it, or a generation runs (it will restore)
        try:                               # _prefill's rule, on what is known of the prompt yet
            llm = self.llm
            in_memory = common_prefix(np.asarray(llm.input_ids[:llm.n_tokens]), np.asarray(head, dtype=np.int32))
            if best.common > in_memory + 64:
                self._disk_tokens = self._restore(best.digest)
                self._memory_head = None
        finally:
            self.lock.release()

    def calibrate(self, n_tokens: int) -> float:
        """Read `n_tokens` of filler the way a prompt is read (slices of `batch`) and return
        tokens/s: the app budgets prompts by this machine's measured speed, never a model's
        constant. The KV cache is emptied afterwards."""
        llm = self.llm
        filler = " ".join(["The parties agree that the terms of this agreement apply to every order "
                           "placed under it, unless an order states otherwise in writing."] * 64)
        tokens = llm.tokenize(filler.encode("utf-8"), add_bos=True)[:max(32, min(n_tokens, llm.n_ctx() - 8))]
        with self.lock:
            # untimed warm-up: the first eval pages the weights in and starts the threads,
            # which made a cold measurement 2.5x slower than the answers that followed
            llm.n_tokens = 0
            llm.eval(tokens[:32])
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            llm.n_tokens = 0
            began = time.perf_counter()
            for start in range(0, len(tokens), self.batch):
                llm.eval(tokens[start:start + self.batch])
            seconds = time.perf_counter() - began
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            llm.n_tokens = 0
        self.measured_prefill_tps = len(tokens) / max(seconds, 1e-6)
        return self.measured_prefill_tps

    def restore_latest(self) -> int:
        """At start-up: put the document used last back into memory from the disk store, so
        the first question after a restart about the same document (the usual case: the
        app reopens what was open) finds it there, as a follow-up does. Runs on its own
        thread while the server starts; a request that comes first wins the lock and
        restores what it needs itself. Returns the tokens restored."""
        if self.store is None or not self.lock.acquire(blocking=False):
            return 0
        try:
            digest = self.store.latest()
            if digest is None or self.llm.n_tokens:
                return 0
            self._disk_tokens = self._restore(digest)
            return self._disk_tokens
        finally:
            self.lock.release()

    def chat(self, messages: list[dict], params: Params,
             cancelled: Callable[[], bool] = lambda: False,
             on_progress: Callable[[int, int], None] | None = None) -> Iterator[tuple[str, Usage]]:
        """Yield (text delta, usage so far); the last yield has usage.finish_reason set.
        `on_progress(tokens in memory, prompt tokens)` is called as the prompt is read: once it
        is accepted, then after every slice (the HTTP layer turns it into SSE comments)."""
        tokens, template_stops, head = self._prompt(messages)
        tokens, template_stops = list(tokens), list(template_stops)
        n_ctx = self.llm.n_ctx()
        if len(tokens) >= n_ctx:
            raise RequestError(f"the prompt is {len(tokens)} tokens but the context holds {n_ctx}")
        if params.passages and (not messages or params.passages.tail > len(messages[-1]["content"])):
            raise RequestError("pagewise_passages: 'tail' lies beyond the last message")
        # before the reply's headers go out: a grammar llama.cpp refuses is then a 400, not a
        # stream closed halfway (converted and parsed in ~2 ms, then cached)
        grammar = self._grammar(params.schema) if params.schema is not None else None
        if on_progress:               # accepted: the client hears from us
            on_progress(0, len(tokens))
        usage = Usage(prompt_tokens=len(tokens))
        began, self._memory_head = time.perf_counter(), None
        behind = self._passage_cutter(messages, params.passages, began, usage) if params.passages else None
        # A seeded request evaluates its last prompt token on its own, whatever the cache held:
        # the logits it samples from then do not depend on how the prompt was batched (a batch
        # of 37 and a batch of 1 round differently on some CPUs), so the same seed gives the same
        # sample on a cold and a warm cache. Unseeded requests keep the one-pass follow-up.
        if not self._prefill(tokens, usage, cancelled, last_apart=params.seed is not None,
                             on_progress=on_progress, behind=behind):
            usage.finish_reason = "cancelled"
            yield "", usage
            return
        usage.prompt_s = time.perf_counter() - began
        self._memory_head = head
        yield from self._generate(tokens, params, template_stops, grammar, usage, cancelled)

    # --- prompt: reuse memory, else disk, then evaluate the rest --------------------------------
    def _prefill(self, tokens: list[int], usage: Usage, cancelled: Callable[[], bool],
                 last_apart: bool = False, on_progress: Callable[[int, int], None] | None = None,
                 behind: Callable[[list[int], int, float], list[int] | None] | None = None) -> bool:
        """Reuse what memory or the disk store holds of the prompt; evaluate the rest in slices.

        No KV save due (a follow-up, a restart on a known document): the slices run through the
        last token, so generate() finds the whole prompt evaluated and samples the first answer
        token at once. One llama_decode for a follow-up's new tokens, as llama-cpp-python's own
        generate() does; evaluating the last token apart costs a second pass over the whole
        context (~40 ms at 5K tokens on 2 cores, about a tenth of a follow-up's wait).
        A save due (a long prompt read for the first time): the state is saved before the last
        token, which generate() then evaluates, as before: one more decode after a read of at
        least 512 tokens (< 1% of it), and first answers come from the same evaluation as before.
        `behind(tokens, read, tokens/s)`: after each slice, a shorter prompt when the reading runs
        behind its plan (a passage plan's cut); `tokens` becomes it, what was read of it is kept."""
        llm, n = self.llm, len(tokens)
        reuse = n - 1                            # the last token is always evaluated: its logits are sampled
        prompt = np.asarray(tokens, dtype=np.int32)
        have = min(common_prefix(np.asarray(llm.input_ids[:llm.n_tokens]), prompt), reuse)
        from_disk, self._disk_tokens = self._disk_tokens, 0     # an early restore counts for this request
        usage.restored_tokens = min(have, from_disk)
        best = self.store.best(tokens) if self.store else None
        if best and min(best.common, reuse) > have + 64:   # disk beats memory by a margin worth a load
            have = min(self._restore(best.digest), best.common, reuse)
            usage.restored_tokens = have
        usage.cached_tokens = have
        save = self.store is not None and self.store.worth_saving(reuse, best.common if best else 0)
        end = reuse if save or last_apart else n
        llm.n_tokens = have                      # eval() first drops KV cells from n_tokens on
        start, size = have, min(self.batch, MIN_SLICE)   # the first slice measures this machine's speed
        read_began = time.perf_counter()
        while start < end:
            self.progress = (start - have, end - have)
            if on_progress:
                on_progress(start, n)
            if cancelled():
                self._save_partial(tokens, start, best.common if best else 0)
                return False
            began = time.perf_counter()
            step = tokens[start:min(start + size, end)]
            llm.eval(step)
            start += len(step)
            # slices of about a second: progress stays live (and a stall deadline meaningful)
            # on a slow model, and a Stop or a pre-empting question waits at most that long
            rate = len(step) / max(time.perf_counter() - began, 1e-6)
            size = max(MIN_SLICE, min(self.batch, int(rate * SLICE_S)))
            shorter = behind(tokens, start, (start - have) / max(time.perf_counter() - read_began, 1e-6)) \
                if behind and start < end else None
            if shorter is not None:   # behind plan: the lower-ranked passages go, the question stays
                start = min(start, common_prefix(prompt[:start], np.asarray(shorter, dtype=np.int32)))
                tokens[:], n = shorter, len(shorter)
                prompt, reuse = np.asarray(tokens, dtype=np.int32), n - 1
                save = self.store is not None and self.store.worth_saving(reuse, best.common if best else 0)
                end = reuse if save or last_apart else n
                llm.n_tokens = start             # the next eval drops the cells of the cut passages
                usage.prompt_tokens = n
        self.progress = (end - have, end - have)
        if on_progress:               # read (the last token goes with the first answer token)
            on_progress(n, n)
        if save:
            llm._ctx.kv_cache_seq_rm(-1, reuse, -1)   # cells of an earlier answer must not go to disk
            try:
                self.store.save(llm._ctx.ctx, tokens[:reuse])
            except OSError as exc:  # a full disk must not fail the answer
                print(f"kv-store: not saved ({exc})", flush=True)
        return True

    def _passage_cutter(self, messages: list[dict], plan: PassagePlan, began: float, usage: Usage):
        """The `behind` check of _prefill for a passage plan: at the speed measured so far in
        this reading, can the rest be read by the deadline? If not, the prompt with the most
        passages that can (at least the best one), found by bisection over exact token counts."""
        total = len(plan.ends)
        usage.passages_read = usage.passages_total = total

        def seconds_left(tokens: list[int], read: int, candidate: list[int], tps: float) -> float:
            same = common_prefix(np.asarray(tokens[:read], dtype=np.int32), np.asarray(candidate, dtype=np.int32))
            return (len(candidate) - same) / tps

        def behind(tokens: list[int], read: int, tps: float) -> list[int] | None:
            usage.measured_tps = round(tps, 1)
            left = plan.deadline_s - (time.perf_counter() - began)
            if usage.passages_read <= 1 or (len(tokens) - read) / tps <= left:
                return None
            low, high, best = 1, usage.passages_read - 1, None   # the most passages whose rest fits
            while low <= high:
                mid = (low + high) // 2
                candidate = list(self._prompt(plan.cut(messages, mid))[0])
                if seconds_left(tokens, read, candidate, tps) <= left or mid == 1:
                    best, low = (mid, candidate), mid + 1
                else:
                    high = mid - 1
            usage.passages_read = best[0]
            print(f"chat: behind plan at {tps:.1f} tok/s ({left:.1f} s left): "
                  f"reading {best[0]} of {total} passages", flush=True)
            return best[1]
        return behind

    def _save_partial(self, tokens: list[int], evaluated: int, best_common: int) -> None:
        """A read stopped midway (a question pre-empted the background reading, or the client
        left): keep what was read on disk, so reading it again resumes where it stopped."""
        if self.store is None or not self.store.worth_saving(evaluated, best_common):
            return
        llm = self.llm
        llm._ctx.kv_cache_seq_rm(-1, evaluated, -1)
        try:
            self.store.save(llm._ctx.ctx, tokens[:evaluated])
        except OSError as exc:  # only a speed-up
            print(f"kv-store: partial read not saved ({exc})", flush=True)

    def _restore(self, digest: str) -> int:
        """Replace the in-memory KV with a stored entry; returns how many tokens it holds."""
        llm = self.llm
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)      # the file's cells go into an empty sequence
        restored = self.store.load(llm._ctx.ctx, digest, llm.n_ctx())
        if not restored:
            llm.n_tokens = 0
            return 0
        llm.input_ids[:len(restored)] = restored
        llm.n_tokens, llm._requires_eval = len(restored), True
        return len(restored)

    # --- answer ---------------------------------------------------------------------------------
    def _generate(self, tokens, params, template_stops, grammar, usage, cancelled):
        llm = self.llm
        llm.set_seed(params.seed if params.seed is not None else random.randint(0, 2**31 - 1))
        budget = min(params.max_tokens, llm.n_ctx() - len(tokens))
        stops = StopFilter(params.stop + template_stops)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        began, usage.finish_reason = time.perf_counter(), "length"
        # generate() evaluates what _prefill left (nothing, or the last token) and samples
        guard = AnswerLoopGuard(llm, len(tokens)) if grammar is not None else None
        first = FirstTokenOdds(llm, params.top_logprobs, usage) if params.top_logprobs else None
        processors = [p for p in (first, guard) if p is not None]
        gen = llm.generate(tokens, temp=params.temperature, top_p=params.top_p,
                           repeat_penalty=params.repeat_penalty, grammar=grammar,
                           logits_processor=llama_cpp.LogitsProcessorList(processors) if processors else None)
        try:
            for token in gen:
                if cancelled():
                    usage.finish_reason = "cancelled"
                    break
                if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token) or token in self._eos:
                    usage.finish_reason = "stop"
                    break
                usage.completion_tokens += 1
                text, hit = stops.feed(decoder.decode(llm.detokenize([token])))
                usage.generate_s = time.perf_counter() - began
                if text:
                    yield text, usage
                if hit:
                    usage.finish_reason = "stop"
                    break
                if usage.completion_tokens >= budget:
                    break
        finally:
            gen.close()
        if guard and guard.fired:
            print(f"chat: the answer repeated itself; ended it after {usage.completion_tokens} tokens", flush=True)
            if usage.finish_reason == "stop":      # the client tells the user (ChatResult.cut)
                usage.finish_reason = "loop"
        usage.generate_s = time.perf_counter() - began
        if self.store is not None:
            self.store.settled()        # an answer came out of the restored state: it did not crash us
        yield stops.flush(), usage

    def _grammar(self, schema: dict) -> LlamaGrammar:
        key = json.dumps(schema, sort_keys=True)
        if key in self._grammars:
            self._grammars.move_to_end(key)
            return self._grammars[key]
        try:
            grammar = (LlamaGrammar.from_string(schema_to_gbnf(schema), verbose=False) if schema
                       else LlamaGrammar.from_string(JSON_GBNF, verbose=False))
        except Exception as exc:
            raise RequestError(f"cannot turn the JSON schema into a grammar: {exc}") from None
        if not grammar_compiles(self.llm, grammar):
            raise RequestError("llama.cpp refused the reply's grammar (a bounded repetition too long "
                               "for its parser)")
        self._grammars[key] = grammar
        while len(self._grammars) > GRAMMARS_CACHE:
            self._grammars.popitem(last=False)
        return grammar


_GBNF_ESCAPE = re.compile(r'[\\"\r\n]')
_GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n"}


# A JSON string's character: anything but a quote, a backslash or a control character
# (RFC 8259 forbids U+0000-U+001F raw in strings), or an escape. llama-cpp-python's own rule
# is `[^"\\]`, which let the model write a raw newline inside the answer: invalid JSON for
# any strict parser (`json.loads` raised "Invalid control character").
STRICT_CHAR = BuiltinRule(r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})', [])


class _Utf8Converter(SchemaConverter):
    """Three fixes to llama-cpp-python's converter. Constants (enum, const): it spells
    them with json.dumps' \\u escapes, so a quote offered in Chinese or with curly quotes
    could only be written as escape sequences, which a model does not choose naturally
    (raw UTF-8 is valid JSON); and it does not escape backslashes for GBNF, so a constant
    holding a double quote (JSON `\\"`) ended the GBNF literal early: the grammar failed
    to parse and the worker died. Strings: raw control characters are refused (STRICT_CHAR)."""

    def _add_primitive(self, name: str, rule: BuiltinRule):
        return super()._add_primitive(name, STRICT_CHAR if name == "char" else rule)

    def _generate_constant_rule(self, value):
        text = json.dumps(value, ensure_ascii=False)
        return '"' + _GBNF_ESCAPE.sub(lambda m: _GBNF_ESCAPES[m.group()], text) + '"'


def grammar_compiles(llm: llama_cpp.Llama, grammar: LlamaGrammar) -> bool:
    """llama.cpp parses the grammar only when a reply's sampler is built, and a grammar it
    refuses (it prints "parse: error parsing grammar") leaves a null sampler that kills the
    worker mid-request: parsed here first, so the request fails with one line instead."""
    sampler = llama_cpp.llama_sampler_init_grammar(llama_cpp.llama_model_get_vocab(llm.model),
                                                   grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def schema_to_gbnf(schema: dict) -> str:
    converter = _Utf8Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(schema, "stdin"), "")
    return converter.format_grammar()


class FirstTokenOdds:
    """A logits processor that notes the first answer token's `top` likeliest tokens with their
    log-probabilities (before any grammar) into `usage.top_logprobs`, and changes nothing: how
    likely the model was to say "yes" rather than "no" (the evidence cards' judge) is read there."""

    def __init__(self, llm: llama_cpp.Llama, top: int, usage: Usage):
        self.llm, self.top, self.usage, self.done = llm, top, usage, False

    def __call__(self, input_ids, scores):
        if not self.done:
            self.done = True
            z = scores.astype(np.float64)
            logp = z - (z.max() + np.log(np.exp(z - z.max()).sum()))
            best = np.argpartition(-logp, self.top)[:self.top]
            best = best[np.argsort(-logp[best])]
            self.usage.top_logprobs = [(self.llm.detokenize([int(t)]).decode("utf-8", "replace"), float(logp[t]))
                                       for t in best]
        return scores


class StopFilter:
    """Holds back only text that could be the start of a stop string, so TTFT is not delayed."""

    def __init__(self, stops: list[str]):
        self.stops, self.buf, self.hit = [s for s in stops if s], "", False

    def feed(self, text: str) -> tuple[str, bool]:
        self.buf += text
        cut = min((i for i in (self.buf.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.hit, out, self.buf = True, self.buf[:cut], ""
            return out, True
        hold = max((n for s in self.stops for n in range(1, len(s)) if self.buf.endswith(s[:n])), default=0)
        split = len(self.buf) - hold
        out, self.buf = self.buf[:split], self.buf[split:]
        return out, False

    def flush(self) -> str:
        out, self.buf = self.buf, ""
        return out


def _formatter(llm: llama_cpp.Llama):
    """The model's own Jinja chat template (as Llama builds it), else ChatML."""
    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        return llama_chat_format.format_chatml
    vocab = llm._model
    eos, bos = llm.token_eos(), llm.token_bos()
    return llama_chat_format.Jinja2ChatFormatter(
        template=template, eos_token=vocab.token_get_text(eos) if eos != -1 else "",
        bos_token=vocab.token_get_text(bos) if bos != -1 else "", stop_token_ids=[eos])
