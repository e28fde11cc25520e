"""The answer pipeline (app.core.answer.qa) against a real llama.cpp child with the embedded
model: an answer and its follow-up reusing the document, and one conversation over two documents
whose answers cite their own cards."""
from __future__ import annotations

import json

import pytest

from app.core.answer import qa
from app.core.answer.evidence import find_evidence
from app.core.answer.verdict import RESCUED_CONTEXT
from app.core.library import Library
from app.core.models import catalogue as models

PSA = "contracts-en/bonterms-psa-v1.2.pdf"


@pytest.fixture
def lib_with(corpus):
    lib = Library()
    yield lambda rel: lib.add(corpus / rel), lib
    lib.close()


@pytest.mark.slow
def test_real_engine_answer_and_follow_up_reuses_the_document(lib_with):
    from app.worker.client import ChatClient
    from app.worker.engines import llamacpp
    from app.worker.supervisor import Supervisor

    add, lib = lib_with
    info = add("contracts-en/common-paper-mnda.pdf")
    refs = [qa.DocRef(1, info.id, "mnda.pdf")]
    spec = llamacpp.launch_spec(models.local_path(models.load_catalogue().default), n_ctx=8192,
                                threads=1, model_name="smollm2")
    sup = Supervisor(spec)
    sup.start()
    try:
        client = ChatClient(spec.base_url, spec.api_key, spec.model_name)
        deltas = []
        first = qa.ask(qa.Question(lib, refs, "Who are the parties?", 8192), client,
                       qa.AskOptions(mode="whole-document"), qa.Listeners(on_delta=deltas.append))
        assert first.mode == "whole-document" and deltas
        data = json.loads(first.raw)                   # schema-constrained: always valid JSON
        assert set(data) >= {"answer", "citations"}
        for c in first.citations:
            assert c.doc == "mnda.pdf" and 1 <= c.page <= info.page_count
        follow = qa.ask(qa.Question(lib, refs, "How long does the agreement last?", 8192), client,
                        qa.AskOptions(mode="whole-document"))
        assert follow.usage.cached_tokens > 0.9 * first.usage.prompt_tokens - 40
        print(f"\nTTFT first {first.timing.ttft_s:.2f} s, follow-up {follow.timing.ttft_s:.2f} s, "
              f"prompt {first.usage.prompt_tokens} tokens, cached on follow-up {follow.usage.cached_tokens}")
    finally:
        sup.stop()


@pytest.mark.slow
def test_two_questions_on_two_documents_cite_their_own_documents(corpus):
    """Every answer of a conversation cited one sentence (the first answer's, or one p. 9 line of
    a CSA on a GPU): a real llama.cpp child with the embedded model, one conversation over two
    documents, a question about each; then each document in a conversation of its own on the same
    engine. Each answer may cite only its own cards, and its citations land on its document."""
    from app.worker.client import ChatClient
    from app.worker.engines import llamacpp
    from app.worker.supervisor import Supervisor

    lib = Library()
    mnda, psa = lib.add(corpus / "contracts-en/common-paper-mnda.pdf"), lib.add(corpus / PSA)
    both = [qa.DocRef(1, mnda.id, "mnda.pdf"), qa.DocRef(2, psa.id, "psa.pdf")]
    asks = [("How long does the MNDA term last, and how long does confidentiality last after it ends?", mnda),
            ("How many days does the customer have to review and test a Deliverable subject to acceptance?", psa)]
    spec = llamacpp.launch_spec(models.local_path(models.load_catalogue().default), n_ctx=8192,
                                threads=1, model_name="smollm2")
    sup = Supervisor(spec)
    sup.start()
    try:
        client = ChatClient(spec.base_url, spec.api_key, spec.model_name)
        options = qa.AskOptions(mode="retrieval", target_s=10, prefill_tps=200)
        conv, cited = qa.Conversation(), []
        for question, info in asks:
            evidence = find_evidence(lib, both, question)
            assert {c.doc_id for c in evidence.cards[:1]} == {info.id}     # the search found its document
            answer = qa.ask(qa.Question(lib, both, question, 8192, conv, evidence), client, options)
            own = {(c.doc_id, c.page, c.quote) for c in evidence.cards}
            assert json.loads(answer.raw)["citations"] is not None
            pages = {(d, p) for d, p, _ in own}
            for c in answer.citations:
                if c.note == RESCUED_CONTEXT:     # a sentence read beside one of its own cards
                    assert (c.doc_id, c.page) in pages, "a rescued sentence off this question's card pages"
                else:
                    assert (c.doc_id, c.page, c.quote) in own, "a citation outside this question's cards"
            assert conv.turns[-1].cards and all(p.ids for p in conv.turns[-1].passages)
            cited.append({(c.doc_id, c.quote) for c in answer.citations})
        assert not (cited[0] & cited[1]), "both answers cite the same sentence"
        for question, info in asks:                 # a conversation of its own per document, same engine
            refs = [qa.DocRef(1, info.id, "doc.pdf")]
            evidence = find_evidence(lib, refs, question)
            answer = qa.ask(qa.Question(lib, refs, question, 8192, qa.Conversation(), evidence), client, options)
            assert all(c.doc_id == info.id for c in answer.citations)
            print(f"\n{question[:40]}… → {answer.text[:80]!r} cites {[c.page for c in answer.citations]} "
                  f"status {answer.state}")
    finally:
        sup.stop()
        lib.close()
