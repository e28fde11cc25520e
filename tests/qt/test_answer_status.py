"""The window shows what the answer's status says: a backed answer leads in green, an unbacked
one is greyed under the cards without sources to follow, and a "not addressed" one says so."""
from app.core.answer.evidence.cards import Evidence, EvidenceCard


def _evidence(addressed=True):
    card = EvidenceCard(doc_id=1, doc="contract.pdf", number=1, page=3,
                        quote="Customer will have 15 days to test the Deliverable.", clause="Section 4.2",
                        score=1.0, share=0.5)
    return Evidence("How long is the test period?", [card], addressed, 12.0)


def _shown(qtbot, shown_as, headline, text="15 days.", addressed=True):
    from app.qt.chat_panel import ChatPanel
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.begin("How long is the test period?")
    panel.show_evidence(_evidence(addressed))
    citation = {"doc": "contract.pdf", "page": 3, "quote": "Customer will have 15 days", "verified": True}
    panel.finish(text, [citation], "retrieval · 3.1 s", headline, shown_as)
    return panel.transcript.toHtml(), panel.transcript.toPlainText()


def test_a_backed_answer_leads_with_its_sources(qtbot):
    html, text = _shown(qtbot, "answer", "answer")
    assert "ANSWER" in text and "Sources: [1]" in text and "#1e8449" in html


def test_an_unbacked_answer_has_no_sources_to_follow(qtbot):
    _, text = _shown(qtbot, "not_backed", "evidence")
    assert "ANSWER\n" not in text and "[1]" not in text and "15 days." in text


def test_not_addressed_is_said_once(qtbot):
    # the model says the cards do not state it, the search found them on topic: the model's view is said
    _, text = _shown(qtbot, "not_addressed", "evidence", text="The documents do not state it.")
    assert "NO ANSWER FOUND BY THE MODEL" in text and text.count("found no answer in the cards below") == 1
    assert "does not appear to address" not in text
    _, text = _shown(qtbot, "not_addressed", "evidence", text="", addressed=False)
    assert text.count("does not appear to address") == 1 and "NOT ADDRESSED" not in text
