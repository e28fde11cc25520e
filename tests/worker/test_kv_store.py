"""Disk KV store: real llama.cpp state round trips; LRU and crash-safety of the files."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from app.worker.llama.chat import ChatEngine, Params
from app.worker.llama.kv_store import KvStore, common_prefix, model_key
from tests.support.llama_inproc import ask, new_llama


class ByteStore(KvStore):
    """The store's file handling with a stand-in state writer (no engine needed for LRU tests)."""

    @staticmethod
    def _write_state(ctx, path, toks):
        path.write_bytes(b"k" * 1000)
        return True


def test_common_prefix():
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    assert common_prefix(a, np.array([1, 2, 9], dtype=np.int32)) == 2
    assert common_prefix(a, a[:2]) == 2 and common_prefix(a, np.array([], dtype=np.int32)) == 0


def test_best_picks_the_longest_shared_prefix(tmp_path):
    store = ByteStore(tmp_path, "m", min_tokens=2)
    store.save(None, [1, 2, 3, 4, 5])
    store.save(None, [1, 2, 7, 8, 9, 10])
    match = store.best([1, 2, 3, 4, 6, 6])
    assert match.common == 4 and match.n_tokens == 5
    assert store.best([9, 9]).common == 0
    assert ByteStore(tmp_path, "m").best([1, 2, 7, 8]).common == 4       # a new process sees them too
    assert KvStore(tmp_path, "other-model").best([1, 2, 3]) is None       # per model


def test_worth_saving_needs_enough_new_tokens(tmp_path):
    store = KvStore(tmp_path, "m", min_tokens=512)
    assert store.worth_saving(2000, 0) and store.worth_saving(2000, 1400)
    assert not store.worth_saving(2000, 1900) and not store.worth_saving(300, 0)


def test_lru_prune_keeps_recently_used_entries(tmp_path):
    store = ByteStore(tmp_path, "m", max_bytes=2 * 1020 + 10, min_tokens=1)
    store.save(None, [1] * 5)
    store.save(None, [2] * 5)
    old = time.time() - 100
    for i, path in enumerate(sorted(store.dir.iterdir())):
        os.utime(path, (old + i, old + i))
    first = store.best([1] * 5).digest
    store.touch(first)                              # used: the [2] entry is now the oldest
    store.save(None, [3] * 5)                       # over budget → evict one
    kept = {int(np.fromfile(p, dtype=np.int32)[0]) for p in store.dir.glob("*.tok")}
    assert kept == {1, 3} and store.total_bytes() <= store.max_bytes


def test_half_written_entries_are_never_used_and_get_cleaned(tmp_path):
    store = ByteStore(tmp_path, "m", min_tokens=1)
    store.save(None, [5, 6, 7])
    (store.dir / "deadbeef.kv").write_bytes(b"x" * 100)            # crashed before its .tok
    (store.dir / "cafe.tok").write_bytes(np.array([5, 6, 7, 8], dtype=np.int32).tobytes())  # .kv lost
    (store.dir / "feed.kv.123.tmp").write_bytes(b"partial")
    old = time.time() - 7200
    for name in ("deadbeef.kv", "feed.kv.123.tmp"):
        os.utime(store.dir / name, (old, old))
    assert store.best([5, 6, 7, 8]).n_tokens == 3                    # the orphan .tok is ignored
    store.prune()
    assert sorted(p.suffix for p in store.dir.iterdir()) == [".kv", ".tok"]


@pytest.mark.slow
def test_state_round_trip_gives_the_same_next_token_logits(tmp_path, model_path, document):
    llm = new_llama(model_path)
    tokens = llm.tokenize(document.encode(), add_bos=True)[:300]
    llm.eval(tokens)
    store = KvStore(tmp_path, model_key(model_path), min_tokens=100)
    store.save(llm._ctx.ctx, tokens[:-1])
    reference = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()

    fresh = new_llama(model_path)                                   # as after a restart
    match = store.best(tokens)
    assert match.common == len(tokens) - 1
    restored = store.load(fresh._ctx.ctx, match.digest, fresh.n_ctx())
    assert restored == tokens[:-1]
    fresh.input_ids[:len(restored)] = restored
    fresh.n_tokens = len(restored)
    fresh.eval(tokens[-1:])
    logits = np.ctypeslib.as_array(fresh._ctx.get_logits(), shape=(fresh.n_vocab(),))
    assert np.argmax(logits) == np.argmax(reference)
    assert np.allclose(logits, reference, atol=0.05 * np.abs(reference).max())

    kv = store.dir / f"{match.digest}.kv"
    kv.write_bytes(kv.read_bytes()[: kv.stat().st_size // 2])      # damaged file: refused, no crash
    assert store.load(new_llama(model_path)._ctx.ctx, match.digest, 2048) is None


@pytest.mark.slow
def test_engine_answers_the_same_from_disk_state_as_from_scratch(tmp_path, model_path, document):
    messages = [{"role": "system", "content": document}, {"role": "user", "content": "Who are the parties?"}]
    params = Params(max_tokens=12)

    store = KvStore(tmp_path, model_key(model_path), min_tokens=100)
    cold_text, cold = ask(ChatEngine(new_llama(model_path), store), messages, params)
    assert cold.cached_tokens == 0 and len(list(store.dir.glob("*.tok"))) == 1
    warm_text, warm = ask(ChatEngine(new_llama(model_path), store), messages, params)    # a new process, same folder
    assert warm.restored_tokens == warm.cached_tokens == warm.prompt_tokens - 1
    assert warm_text == cold_text
    assert len(list(store.dir.glob("*.tok"))) == 1                        # nothing new worth saving
