"""An answer people can keep: Markdown with its citations, or a one-page-or-more PDF memo
(PyMuPDF's Story lays out HTML; no extra dependency). Takes an answer as its dict
(Answer.to_dict / Review.to_dict): "answer", "citations" [{doc, page, quote, verified}]."""
from __future__ import annotations

import html
import os
import time
from pathlib import Path

from app.core.answer.badge import Badge
from app.core.answer.evidence.wording import NOT_BACKED, not_addressed



def _evidence(answer: dict) -> tuple[str, list[dict]]:
    """The evidence cards' heading and cards (empty when the answer has none)."""
    ev = answer.get("evidence") or {}
    cards = ev.get("cards") or []
    if not cards:
        return "", []
    return ("Evidence" if ev.get("addressed", True) else not_addressed(bool(ev.get("no_figure")))), cards


def _card_line(card: dict) -> str:
    clause = f" · {card['clause']}" if card.get("clause") else ""
    return f"{Path(str(card.get('doc', ''))).name}, p. {card.get('page')}{clause}"


def _made_by(answer: dict, stamp: str) -> str:
    """ "Pagewise, 2026-12-03 10:00 · Qwen2.5-3B-Instruct-Q4_K_M (llama.cpp)": what answered."""
    engine = answer.get("engine") or {}
    model = Path(str(engine.get("model") or "")).name
    name = f" ({engine['name']})" if engine.get("name") and model else ""
    return f"Pagewise, {stamp}" + (f" · {model}{name}" if model else "")


def _warnings(answer: dict) -> list[str]:
    """The answer's warnings (instruction-like text found, nothing convincing found, reply cut)."""
    return [" ".join(str(w).split()) for w in answer.get("warnings") or [] if str(w).strip()]


TEST_MODEL_CAVEAT = ("Written by the small built-in test model: its answers show how Pagewise works and "
                     "are not to be relied on. The evidence quotes are the documents' own words.")


def _caveat(answer: dict) -> str | None:
    """The test-model caveat when the embedded 135M model wrote the answer."""
    model = str((answer.get("engine") or {}).get("model") or "")
    if not model:
        return None
    from app.core.models.catalogue import load_catalogue
    try:
        spec = load_catalogue(imported=False).get(model)
    except Exception:  # noqa: BLE001 - an unknown or imported model: no caveat to add
        return None
    return TEST_MODEL_CAVEAT if spec.source == "embedded" and spec.role == "chat" else None


def title(question: str) -> str:
    """The memo's title (its first heading and its PDF metadata)."""
    return " ".join(question.split())[:200] or "Answer"


def _model_heading(answer: dict) -> str | None:
    """None: the model's answer is the answer (no heading of its own when there are no cards)."""
    if not (answer.get("evidence") or {}).get("cards"):
        return None
    return "Answer" if answer.get("headline", "answer") == "answer" else NOT_BACKED


def _stamp(when: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() if when is None else when))


def to_markdown(question: str, answer: dict, when: float | None = None) -> str:
    return "\n".join(_exchange_markdown(question, answer, _stamp(when), level=1))


def _exchange_markdown(question: str, answer: dict, stamp: str, level: int) -> list[str]:
    """One question and its answer; its title at heading `level`, its parts one level under."""
    top, sub = "#" * level, "#" * (level + 1)
    lines = [f"{top} {question.strip() or 'Answer'}", "", f"*{_made_by(answer, stamp)}{_timing(answer)}*", ""]
    notes = _warnings(answer) + ([_caveat(answer)] if _caveat(answer) else [])
    lines += [f"> ⚠ {w}" for w in notes] + ([""] if notes else [])
    heading, cards = _evidence(answer)
    if cards:             # evidence first: the page's own words, then the model's part
        lines += [f"{sub} {heading}", ""]
        for n, card in enumerate(cards, start=1):
            quote = " ".join(str(card.get("quote", "")).split()).replace("*", r"\*")
            lines.append(f"E{n}. **{_card_line(card)}** [verified]: “{quote}”")
        lines.append("")
    model = _model_heading(answer)
    if model:
        lines += [f"{sub} {model}", ""]
    lines += [(answer.get("answer") or "(no answer)").strip(), ""]
    cites = answer.get("citations") or []
    if cites:
        lines += [f"{sub} Citations", ""]
        for n, c in enumerate(cites, start=1):
            badge = Badge.of(c).text()      # "verified; does not obviously support the answer"
            note = f" ({c['note']})" if c.get("note") else ""
            quote = " ".join(str(c.get("quote", "")).split()).replace("*", r"\*")
            lines.append(f"{n}. **{Path(str(c.get('doc', ''))).name}, p. {c.get('page')}** "
                         f"[{badge}]{note}: “{quote}”")
        lines.append("")
    else:
        lines += ["*No citations.*", ""]
    return lines


def _timing(answer: dict) -> str:
    """ " · first words in 1.5 s · 4.2 s in all" (what the window said under the answer)."""
    timing = answer.get("timing") or {}
    parts = []
    if timing.get("ttft_s") is not None:
        parts.append(f"first words in {float(timing['ttft_s']):.1f} s")
    if timing.get("total_s") is not None:
        parts.append(f"{float(timing['total_s']):.1f} s in all")
    return "".join(f" · {p}" for p in parts)


def conversation_markdown(title_text: str, exchanges: list[tuple[str, dict, float | None]]) -> str:
    """A whole conversation: its title, then every question with its answer, in order (each
    with its model, timing, warnings, evidence and citations with their support flags)."""
    lines = [f"# {title_text.strip() or 'Conversation'}", "",
             f"*Pagewise, {_stamp(None)} · {len(exchanges)} question{'s' if len(exchanges) != 1 else ''}*", ""]
    for question, answer, when in exchanges:
        lines += _exchange_markdown(question, answer, _stamp(when), level=2)
    return "\n".join(lines)


def to_pdf(question: str, answer: dict, dest: Path, when: float | None = None) -> Path:
    """A memo: question, answer, numbered citations with document and page references."""
    body = _exchange_html(question, answer, _stamp(when), "h2", "h3")
    return _write_pdf(body, dest, title(question), _made_by(answer, _stamp(when)))


def conversation_pdf(title_text: str, exchanges: list[tuple[str, dict, float | None]], dest: Path) -> Path:
    """A memo of a whole conversation: every question with its answer, as conversation_markdown."""
    made = f"Pagewise, {_stamp(None)} · {len(exchanges)} question{'s' if len(exchanges) != 1 else ''}"
    body = [f"<h1>{html.escape(title_text.strip() or 'Conversation')}</h1>",
            f"<p style='color:#666'><i>{html.escape(made)}</i></p>"]
    for question, answer, when in exchanges:
        body += ["<hr/>"] + _exchange_html(question, answer, _stamp(when), "h2", "h3")
    return _write_pdf(body, dest, title(title_text), made)


def _exchange_html(question: str, answer: dict, stamp: str, top: str, sub: str) -> list[str]:
    esc = html.escape
    parts = [f"<{top}>{esc(question.strip() or 'Answer')}</{top}>",
             f"<p style='color:#666'><i>{esc(_made_by(answer, stamp) + _timing(answer))}</i></p>"]
    notes = _warnings(answer) + ([_caveat(answer)] if _caveat(answer) else [])
    parts += [f"<p style='color:#b9770e'><b>⚠ {esc(w)}</b></p>" for w in notes]
    heading, cards = _evidence(answer)
    if cards:             # evidence first: the page's own words, then the model's part
        parts.append(f"<{sub}>{esc(heading)}</{sub}><ol>")
        parts += [f"<li><b>{esc(_card_line(c))}</b> [verified]: “{esc(' '.join(str(c.get('quote', '')).split()))}”</li>"
                  for c in cards]
        parts.append("</ol>")
    model = _model_heading(answer)
    if model:
        parts.append(f"<{sub}>{esc(model)}</{sub}>")
    parts += [f"<p>{esc(p)}</p>" for p in (answer.get("answer") or "(no answer)").split("\n") if p.strip()]
    cites = answer.get("citations") or []
    if cites:
        parts.append(f"<{sub}>Citations</{sub}><ol>")
        for c in cites:
            badge = Badge.of(c).text()
            parts.append(f"<li><b>{esc(Path(str(c.get('doc', ''))).name)}, p. {c.get('page')}</b> "
                         f"[{badge}]: “{esc(' '.join(str(c.get('quote', '')).split()))}”</li>")
        parts.append("</ol>")
    else:
        parts.append("<p><i>No citations.</i></p>")
    return parts


# A font without ligature substitution: MuPDF's built-in sans writes "ﬁ" into the text layer,
# so a search for "verified" in the memo missed. WenQuanYi Micro Hei (set-up installs it for
# Chinese) has Latin and Han glyphs and no ligatures; elsewhere the built-in sans is used.
NO_LIGATURE_FONTS = (Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),)


def _story(html_text: str, css: str):
    import pymupdf
    font = next((f for f in NO_LIGATURE_FONTS if f.is_file()), None)
    if font is None:
        return pymupdf.Story(html=html_text, user_css="* {font-family: sans-serif;} " + css)
    face = f"@font-face {{font-family: memo; src: url({font.name});}} * {{font-family: memo;}} "
    return pymupdf.Story(html=html_text, user_css=face + css, archive=pymupdf.Archive(str(font.parent)))


def _write_pdf(parts: list[str], dest: Path, doc_title: str, subject: str) -> Path:
    import pymupdf
    css = "* {font-size: 11px;} h1 {font-size: 18px;} h2 {font-size: 16px;} h3 {font-size: 13px;}"
    story = _story("".join(parts), css)
    writer = pymupdf.DocumentWriter(str(dest))
    page_rect, body = pymupdf.paper_rect("a4"), pymupdf.paper_rect("a4") + (56, 56, -56, -56)
    more = True
    while more:
        device = writer.begin_page(page_rect)
        more, _ = story.place(body)
        story.draw(device)
        writer.end_page()
    writer.close()
    with pymupdf.open(dest) as doc:       # a title, not "untitled", in every PDF reader
        doc.set_metadata({"title": doc_title, "author": "Pagewise", "creator": "Pagewise",
                          "subject": subject})
        for page in doc:                  # "Page 2 of 3" at the foot of every page
            page.insert_text((page.rect.width / 2 - 24, page.rect.height - 28),
                             f"Page {page.number + 1} of {doc.page_count}", fontsize=8, color=(0.4, 0.4, 0.4))
        doc.subset_fonts()
        doc.save(str(dest) + ".part", garbage=3, deflate=True)
    os.replace(str(dest) + ".part", dest)
    return dest
