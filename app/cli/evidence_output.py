"""An answer on stdout as it comes, evidence first: the cards found by the search (printed
before the engine even starts), then the model's answer — as the headline only when its
citations back it, else under the cards as "the model's summary is not backed by these
passages". Three forms: text for people, one JSON object at the end (--json), JSON lines as
things happen (--stream: the evidence is the first event)."""
from __future__ import annotations

import json
import sys

from app.core.answer.evidence.wording import NOT_BACKED, not_addressed

NOT_ADDRESSED_ANSWER = "The document does not appear to address this (the passages above are the nearest)."
# the model found nothing where the search found the passages on topic: the model's view, not the document's
NOT_FOUND_BY_MODEL = "The model found no answer in the passages above; the search found them on this topic: read them."


def evidence_text(evidence, judged=None) -> str:
    head = not_addressed(getattr(evidence, "no_figure", False)) if not evidence.addressed else \
        f"Evidence, as the model judged {judged.candidates} passages in {judged.seconds:.1f} s:" if judged else \
        f"Evidence (found in {evidence.ms / 1000:.2f} s, before the model reads anything):"
    lines = [head]
    for n, card in enumerate(evidence.cards, 1):
        clause = f" · {card.clause}" if card.clause else ""
        lines.append(f"  [E{n}] {card.doc} p. {card.page}{clause}")
        lines.append(f"       \u201c{card.quote}\u201d")
    if not evidence.cards:
        lines.append("  (no passage found)")
    return "\n".join(lines)


def answer_text(answer) -> str:
    """The model's part, after the evidence: its answer (or its unbacked summary), citations,
    notes, timing."""
    from app.core.answer.badge import Badge
    text = answer.text or "(no answer)"
    judged = getattr(getattr(answer, "context", None), "judged", None)
    lines = []
    if judged is not None and judged.changed and answer.evidence is not None:
        lines = [evidence_text(answer.evidence, judged), ""]
    if answer.headline == "answer":
        lines += [f"Answer: {text}" if answer.evidence is not None else text, ""]
    elif getattr(answer, "state", "") == "not_addressed":
        addressed = answer.evidence is not None and answer.evidence.addressed
        lines += [NOT_FOUND_BY_MODEL if addressed else NOT_ADDRESSED_ANSWER, f"{NOT_BACKED}: \u201c{text}\u201d", ""]
    else:
        lines += [f"{NOT_BACKED}: \u201c{text}\u201d", ""]
    for n, c in enumerate(answer.citations, start=1):
        badge = Badge.of(c).text()
        note = f" ({c.note})" if c.note else ""
        lines.append(f"[{n}] {c.doc} p. {c.page} [{badge}]{note}: \u201c{c.quote}\u201d")
    if not answer.citations:
        lines.append("(no citations)")
    for w in getattr(answer, "warnings", ()):
        lines.append(f"note: {w}")
    t, engine = answer.timing, answer.engine
    lines.append(f"\n{answer.mode}; {engine.summary if engine else ''}; "
                 f"first token {t.ttft_s or 0:.2f} s, total {t.total_s:.2f} s")
    return "\n".join(lines)


class AnswerPrinter:
    """Prints each question's evidence and answer as they come (text or --stream), or
    collects them for one JSON object (--json)."""

    def __init__(self, json_out: bool, stream: bool):
        self.json_out, self.stream = json_out, stream
        self.count = 0

    def _line(self, data: dict) -> None:
        print(json.dumps(data, ensure_ascii=False), flush=True)

    def evidence(self, question: str, evidence, number: int, total: int) -> None:
        if self.stream:
            self._line({"event": "evidence", "question": question, **evidence.to_dict()})
        elif not self.json_out:
            prefix = f"Q{number}: {question}\n" if total > 1 else ""
            print(("\n" if number > 1 else "") + prefix + evidence_text(evidence) + "\n", flush=True)

    def delta(self, text: str) -> None:
        if self.stream:
            self._line({"event": "delta", "text": text})

    def answer(self, answer) -> None:
        if self.stream:
            self._line({"event": "answer", **answer.to_dict()})
        elif not self.json_out:
            print(answer_text(answer), flush=True)
        sys.stdout.flush()
