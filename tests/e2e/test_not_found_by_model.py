"""When the model finds no answer in cards the search found on topic, the CLI says it is the
model's view ("found no answer in the passages above"), not that the document is silent; where
the search itself found nothing on topic, it says the document does not appear to address it."""
from types import SimpleNamespace

from app.cli.evidence_output import NOT_ADDRESSED_ANSWER, NOT_FOUND_BY_MODEL, answer_text


def _answer(addressed: bool):
    timing = SimpleNamespace(ttft_s=1.0, total_s=2.0)
    return SimpleNamespace(text="The document does not say.", headline="evidence", state="not_addressed",
                           evidence=SimpleNamespace(addressed=addressed), citations=[], warnings=[],
                           timing=timing, engine=None, mode="retrieval")


def test_the_model_s_not_stated_on_cards_on_topic_is_said_as_the_model_s():
    text = answer_text(_answer(addressed=True))
    assert NOT_FOUND_BY_MODEL in text and NOT_ADDRESSED_ANSWER not in text


def test_cards_off_topic_are_said_not_to_address_it():
    text = answer_text(_answer(addressed=False))
    assert NOT_ADDRESSED_ANSWER in text and NOT_FOUND_BY_MODEL not in text


def test_cards_on_topic_that_set_no_figure_say_so(tmp_path):
    """The NDA's return clause says "promptly", no number of days: the command line's evidence
    heading says the passages set no figure, not that the document is off topic."""
    from pathlib import Path

    from app.cli.evidence_output import evidence_text
    from app.core.answer.evidence import find_evidence, wording
    from app.core.answer.refs import DocRef
    from app.core.library import Library
    lib = Library(tmp_path / "library.sqlite")
    info = lib.add(Path(__file__).resolve().parents[2] / "resources" / "samples" / "common-paper-mnda.pdf")
    refs = [DocRef(1, info.id, "mnda.pdf")]
    asked = "How many days do we have to destroy the other side's confidential information after they ask us to?"
    assert evidence_text(find_evidence(lib, refs, asked)).startswith(wording.NO_FIGURE)
    assert evidence_text(find_evidence(lib, refs, "What is the purchase price of the shares?")).startswith(
        wording.NOT_ADDRESSED)
    lib.close()
