"""The answer entry's evidence block and the model's part under it, as transcript HTML.

The evidence cards (the search's best sentences, quoted as printed: verified by construction)
lead the entry as soon as they are found; the model's answer follows under "Answer" only when
its citations back it, else it is shown under the cards, greyed, as not backed by them. The
words are the command line's and the exports' (app/core/answer/evidence/wording.py).
"""
from __future__ import annotations

import html
from pathlib import Path

from app.core.answer.evidence.wording import NOT_BACKED, not_addressed

CARD_STYLE = ("margin:2px 0 6px 0; padding:4px 8px; border-left:3px solid #2e86de; "
              "background-color:#f3f7fc")


def _text(value: str) -> str:
    return html.escape(value).replace("\n", "<br>")


def heading(text: str, colour: str = "#2e86de") -> str:
    return (f"<p style='margin-top:8px; margin-bottom:2px; color:{colour}; font-size:small'>"
            f"<b>{html.escape(text.upper())}</b></p>")


def evidence_html(index: int, evidence) -> str:
    """The "Evidence" block of entry `index`: one clickable card per evidence card
    (href "evidence:<entry>:<card>") — where it is, its clause, the quote."""
    if not evidence.addressed:
        why = not_addressed(getattr(evidence, "no_figure", False))
        parts = [heading("Evidence", "#b9770e"), f"<p style='color:#b9770e; margin:0 0 4px 0'>{html.escape(why)}</p>"]
    else:
        how = f"found in {evidence.ms / 1000:.2f} s, " + (
            "then chosen by the model as the likeliest to answer" if getattr(evidence, "judged", False)
            else "then again with the model's wording of the question" if getattr(evidence, "rewritten", "")
            else "before the model reads anything")
        parts = [heading("Evidence") + f"<p style='color:gray; font-size:small; margin:0 0 4px 0'>{how}</p>"]
    for n, card in enumerate(evidence.cards):
        clause = f" · {_text(card.clause)}" if card.clause else ""
        where = f"<b>[E{n + 1}]</b> {_text(Path(card.doc).name)} · p. {card.page}{clause}"
        parts.append(f"<table width='100%' cellspacing='0' cellpadding='0'><tr><td style='{CARD_STYLE}'>"
                     f"<a href='evidence:{index}:{n}' style='text-decoration:none; color:#1b4f72'>{where}</a><br>"
                     f"<a href='evidence:{index}:{n}' style='text-decoration:none; color:black'>"
                     f"\u201c{_text(card.quote)}\u201d</a></td></tr></table>")
    if not evidence.cards:
        parts.append("<p style='color:gray'>(no passage found)</p>")
    return "".join(parts)


def unbacked_html(text: str) -> str:
    """The model's text when its citations do not back it: under the cards, greyed, never
    as the answer."""
    return (f"<p style='margin-top:8px; color:gray; font-size:small'><i>{html.escape(NOT_BACKED)}:</i></p>"
            f"<p style='color:gray; margin-left:8px'>\u201c{_text(text)}\u201d</p>")


REVIEW_NOT_BACKED = ("The model's review, not backed by the quotes it cites: check each point on its page "
                     "(the quotes are in the Citations panel)")


def unchecked_review_html(text: str) -> str:
    """A review whose citations do not back it: greyed and labelled, never shown as an answer."""
    return (f"<p style='margin-top:8px; color:gray; font-size:small'><i>{html.escape(REVIEW_NOT_BACKED)}:</i></p>"
            f"<div style='color:gray; margin-left:8px'>{_text(text)}</div>")
