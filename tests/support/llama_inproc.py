"""For the worker tests that drive llama_cpp in-process: the embedded model, a fresh Llama, and
one page of real contract text as the document (the fixtures `model_path` and `document` in
tests/worker/conftest.py hand the first and last to the tests)."""
from __future__ import annotations

from pathlib import Path

import llama_cpp
import pymupdf

from app.core.models.catalogue import load_catalogue, local_path
from tests.support.corpus import corpus_path


def embedded_model() -> Path:
    """The GGUF of the catalogue's default (embedded) model."""
    return local_path(load_catalogue().default)


def contract_page() -> str:
    """The first 1,500 characters of the mutual NDA's first page."""
    with pymupdf.open(corpus_path("contracts-en/common-paper-mnda.pdf")) as doc:
        return doc[0].get_text()[:1500]


def new_llama(model_path, n_ctx=2048) -> llama_cpp.Llama:
    return llama_cpp.Llama(str(model_path), n_ctx=n_ctx, n_threads=1, verbose=False)


def ask(engine, messages, params) -> tuple[str, object]:
    """One chat through a ChatEngine: its whole text and its last usage."""
    text, usage = "", None
    for delta, usage in engine.chat(messages, params):
        text += delta
    return text, usage
