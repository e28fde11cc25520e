"""Shared by the worker tests that drive llama_cpp in-process: the embedded model, a fresh
Llama, and one page of real contract text as the document."""
from __future__ import annotations

import llama_cpp
import pymupdf
import pytest

from app.core.models.catalogue import load_catalogue, local_path
from tests.support.corpus import corpus_path


@pytest.fixture(scope="module")
def model_path():
    return local_path(load_catalogue().default)


@pytest.fixture(scope="module")
def document() -> str:
    with pymupdf.open(corpus_path("contracts-en/common-paper-mnda.pdf")) as doc:
        return doc[0].get_text()[:1500]


def new_llama(model_path, n_ctx=2048) -> llama_cpp.Llama:
    return llama_cpp.Llama(str(model_path), n_ctx=n_ctx, n_threads=1, verbose=False)
