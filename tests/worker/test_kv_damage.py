"""A damaged KV entry on disk, and a worker that dies after restoring one: real worker processes.

llama.cpp checks its state's magic and sizes, not its cells: 4 KiB of 0xFF inside an entry were
restored as they were and aborted the worker in the sampler on every later answer about that
document, and the entry was never dropped (the abort never reached Python).
"""
from __future__ import annotations

import zlib

import pymupdf
import pytest

from app.worker.client import ChatClient
from app.worker.llama.kv_store import HEADER
from app.worker.supervisor import Supervisor
from tests.support.corpus import corpus_path
from tests.support.waiting import wait_for
from tests.worker.test_supervisor import real_spec

pytestmark = pytest.mark.slow


def two_pages() -> str:
    """~700 tokens of real contract text: past the store's 512-token minimum."""
    with pymupdf.open(corpus_path("contracts-en/common-paper-mnda.pdf")) as doc:
        return "".join(page.get_text() for page in doc)[:5500]


def question(document: str, q: str = "Who are the parties?") -> list[dict]:
    return [{"role": "system", "content": document}, {"role": "user", "content": q}]


def start(tmp_path, log_name: str) -> Supervisor:
    sup = Supervisor(real_spec(tmp_path), log_path=tmp_path / log_name)
    sup.start()
    return sup


def ask(sup: Supervisor, messages) -> str:
    client = ChatClient(sup.spec.base_url, sup.spec.api_key, "smollm2", timeout_s=180)
    return client.chat(messages, max_tokens=6).text


def entries(tmp_path):
    return sorted((tmp_path / "kv").glob("*/*.kv"))


def crc_sound(kv) -> bool:
    data = kv.read_bytes()
    return zlib.crc32(data[HEADER.size:]) == HEADER.unpack(data[:HEADER.size])[3]


def test_a_damaged_entry_is_refused_and_every_answer_still_comes(tmp_path):
    document = two_pages()
    sup = start(tmp_path, "first.log")
    try:
        ask(sup, question(document))
    finally:
        sup.stop()
    (kv,) = entries(tmp_path)
    assert crc_sound(kv)
    data = bytearray(kv.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = b"\xff" * 4096                      # damage inside the cells
    kv.write_bytes(bytes(data))

    sup = start(tmp_path, "second.log")                               # it restores the latest entry at start
    try:
        answers = [ask(sup, question(document, q)) for q in
                   ("Who are the parties?", "How long does it last?", "Which law governs it?")]
        assert all(isinstance(a, str) for a in answers) and sup.is_alive()
    finally:
        sup.stop()
    log = (tmp_path / "second.log").read_text()
    assert "could not be restored; deleted" in log
    assert all(crc_sound(k) for k in entries(tmp_path))               # saved again, sound


def test_a_worker_dying_after_a_restore_counts_against_the_entry(tmp_path):
    document = two_pages()
    sup = start(tmp_path, "first.log")
    try:
        ask(sup, question(document))
    finally:
        sup.stop()
    (kv,) = entries(tmp_path)

    sup = start(tmp_path, "second.log")                               # restores the entry at start…
    try:
        assert wait_for(lambda: "restored the last document's KV state" in (tmp_path / "second.log").read_text(),
                 timeout_s=60)
        assert kv.with_suffix(".restoring").exists()
    finally:
        sup.kill()                                                    # …and dies before any answer

    sup = start(tmp_path, "third.log")
    try:
        assert ask(sup, question(document)) is not None
    finally:
        sup.stop()
    log = (tmp_path / "third.log").read_text()
    assert "a worker died while answering from entry" in log
    assert not kv.with_suffix(".restoring").exists()


def test_a_clean_stop_after_a_restore_keeps_the_entry(tmp_path):
    document = two_pages()
    for name in ("first.log", "second.log"):
        sup = start(tmp_path, name)
        try:
            if name == "first.log":
                ask(sup, question(document))
            else:
                assert wait_for(lambda: "restored the last document's KV state" in (tmp_path / name).read_text(),
                         timeout_s=60)
        finally:
            sup.stop()                                                # SIGTERM: a clean end
    (kv,) = entries(tmp_path)
    assert not kv.with_suffix(".restoring").exists()
    sup = start(tmp_path, "third.log")
    try:
        assert wait_for(lambda: "restored the last document's KV state" in (tmp_path / "third.log").read_text(), timeout_s=60)
    finally:
        sup.stop()
