"""What keeps the worker's time to first token at in-process llama-cpp-python's: one llama_decode
for a prompt's new tokens, one tokenization per prompt, and KV entries restored from a mapping
(with entries of the older llama.cpp file format still readable)."""
from __future__ import annotations

import threading

import llama_cpp
import numpy as np
import pytest

from app.worker.llama.chat import ChatEngine, Params
from app.worker.llama.kv_store import MAGIC, KvStore, model_key
from tests.support.llama_inproc import ask, new_llama

pytestmark = pytest.mark.slow


def count_decodes(llm) -> list[int]:
    """Wrap the context's decode: the list gets each batch's token count."""
    calls, decode = [], llm._ctx.decode

    def counting(batch):
        calls.append(batch.batch.n_tokens)
        return decode(batch)

    llm._ctx.decode = counting
    return calls


def test_a_follow_up_reads_its_new_tokens_in_one_decode(model_path, document):
    engine = ChatEngine(new_llama(model_path))
    first = [{"role": "system", "content": document}, {"role": "user", "content": "Who are the parties?"}]
    follow = [first[0], {"role": "user", "content": "How long does the agreement last?"}]
    ask(engine, first, Params(max_tokens=4))
    calls = count_decodes(engine.llm)
    _, usage = ask(engine, follow, Params(max_tokens=1))        # one answer token: no decode after it
    new = usage.prompt_tokens - usage.cached_tokens
    assert usage.cached_tokens > 200 and 1 < new < engine.batch
    assert calls == [new]                # the last prompt token is not evaluated a second time

    calls.clear()                        # a long unread part: 128-token slices, the last one included
    long_doc = [{"role": "system", "content": document[:700]}, follow[1]]
    _, usage = ask(engine, long_doc, Params(max_tokens=1))
    assert sum(calls) == usage.prompt_tokens - usage.cached_tokens and max(calls) <= engine.batch


def test_tokenize_then_chat_tokenizes_once(model_path, document, monkeypatch):
    engine = ChatEngine(new_llama(model_path))
    messages = [{"role": "system", "content": document}, {"role": "user", "content": "Who signs?"}]
    tokens, stops = engine.tokens_for(messages)
    monkeypatch.setattr(engine.llm, "tokenize", lambda *a, **k: pytest.fail("tokenized twice"))
    again, stops_again = engine.tokens_for([dict(m) for m in messages])
    assert again == tokens and stops_again == stops
    again.append(0)                                              # callers get their own copy
    assert engine.tokens_for(messages)[0] == tokens


def test_restart_restores_a_mapped_entry_and_deletes_an_unchecked_old_format_file(tmp_path, model_path, document):
    messages = [{"role": "system", "content": document}, {"role": "user", "content": "Who are the parties?"}]
    store = KvStore(tmp_path, model_key(model_path), min_tokens=100)
    cold_text, cold = ask(ChatEngine(new_llama(model_path), store), messages, Params(max_tokens=8))
    (kv,) = store.dir.glob("*.kv")
    assert kv.read_bytes()[:4] == MAGIC

    engine = ChatEngine(new_llama(model_path), store)                # a new process, same folder
    calls = count_decodes(engine.llm)
    warm_text, warm = ask(engine, messages, Params(max_tokens=1))
    assert warm.restored_tokens == warm.cached_tokens == warm.prompt_tokens - 1
    assert calls == [1] and cold_text.startswith(warm_text)

    # an entry written by llama_state_seq_save_file (earlier versions) has no checksum: deleted
    tokens = np.fromfile(kv.with_suffix(".tok"), dtype=np.int32)
    llm = engine.llm
    llm._ctx.kv_cache_seq_rm(-1, len(tokens), -1)                  # the cells of the entry's tokens
    arr = (llama_cpp.llama_token * len(tokens))(*tokens.tolist())
    assert llama_cpp.llama_state_seq_save_file(llm._ctx.ctx, str(kv).encode(), 0, arr, len(tokens))
    assert kv.read_bytes()[:4] != MAGIC
    fresh = new_llama(model_path)
    assert store.load(fresh._ctx.ctx, kv.stem, fresh.n_ctx()) is None
    assert not kv.exists() and not kv.with_suffix(".tok").exists()


def test_tokenize_starts_the_disk_restore_of_a_known_document(tmp_path, model_path, document):
    messages = [{"role": "system", "content": document}, {"role": "user", "content": "Who are the parties?"}]
    follow = [messages[0], {"role": "user", "content": "How long does the agreement last?"}]
    store = KvStore(tmp_path, model_key(model_path), min_tokens=100)
    ask(ChatEngine(new_llama(model_path), store), messages, Params(max_tokens=1))

    engine = ChatEngine(new_llama(model_path), store)                # restarted
    tokens = engine.prompt_tokens(follow)                            # /tokenize
    for thread in threading.enumerate():
        if thread.name == "kv-restore":
            thread.join()
    assert engine.llm.n_tokens > 200                                 # restored while it tokenized
    calls = count_decodes(engine.llm)
    with engine.lock:
        _, usage = ask(engine, follow, Params(max_tokens=1))
    assert usage.prompt_tokens == len(tokens) and usage.restored_tokens == usage.cached_tokens > 200
    assert calls == [usage.prompt_tokens - usage.cached_tokens]

    engine.prompt_tokens(follow)                 # the document is in memory now: nothing restored again
    for thread in threading.enumerate():
        if thread.name == "kv-restore":
            thread.join()
    _, again = ask(engine, follow, Params(max_tokens=1))
    assert again.restored_tokens == 0 and again.cached_tokens == len(tokens) - 1

    short = ChatEngine(new_llama(model_path), store)                 # another document: left alone
    short.prompt_tokens([{"role": "user", "content": "Hello there."}])
    for thread in threading.enumerate():
        if thread.name == "kv-restore":
            thread.join()
    assert short.llm.n_tokens == 0
