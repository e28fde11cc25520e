"""Exchanges stored in the library ↔ transcript entries (same JSON as `pagewise ask --json`)."""
from __future__ import annotations

import json
import time
from pathlib import Path

from app.core.answer.citations import Citation
from app.core.answer.streaming import readable_answer
from app.qt.chat_panel import Entry


def answer_json(answer) -> str:
    return json.dumps(answer.to_dict(), ensure_ascii=False)


def is_review(answer) -> bool:
    """A whole-document review (its mode "review in 3 parts" / "review, whole document")."""
    return str(getattr(answer, "mode", "")).startswith("review")


def shown_status(answer) -> tuple[str, str]:
    """(headline, status) the window shows an answer with. A review has no evidence cards, but
    obeys the same rule as answers: it leads only when its citations back it; otherwise it is
    shown greyed as the model's unchecked text."""
    if is_review(answer):
        state = answer.state
        return ("answer" if state == "answer" else "evidence"), state
    return answer.headline, getattr(answer, "state", "")


_STARTED = time.time()     # exchanges older than this were answered in an earlier session


def timing_parts(mode: str, ttft_s: float | None, total_s: float | None, model: str) -> list[str]:
    """'retrieval', 'first words in 1.5 s', '4.2 s in all', the model: said the same for an
    answer just given and one restored from the library."""
    parts = [mode] if mode else []
    if ttft_s is not None:
        parts.append(f"first words in {ttft_s:.1f} s")
    if total_s is not None:
        parts.append(f"{total_s:.1f} s in all" if ttft_s is not None else f"{total_s:.1f} s")
    if model:
        parts.append(Path(model).name)
    return parts


def meta_line(answer) -> str:
    """'retrieval · first words in 1.5 s · 2.4 s in all · smollm2' under each answer."""
    timing = answer.timing
    parts = timing_parts(answer.mode, getattr(timing, "ttft_s", None), getattr(timing, "total_s", None),
                         answer.engine.model if answer.engine is not None else "")
    unverified = sum(1 for c in answer.citations if not c.verified)
    if unverified:
        parts.append(f"{unverified} unverified citation{'s' if unverified > 1 else ''}")
    context = answer.context
    if context is not None and context.new_context:
        parts.append("a new context began: the conversation no longer fitted")
    chose = context.rerank if context is not None else None
    if chose is not None and chose.candidates:
        kept = "kept the search's first" if chose.chosen == 1 else f"moved p. {chose.page} first"
        parts.append(f"the model read {chose.candidates} passages and {kept}")
    line = " · ".join(parts)
    warnings = list(getattr(answer, "warnings", ()) or ())
    return "\n".join([line] + warnings)


def _doc_id(label: str, docs: list) -> int:
    """Which open document a stored citation's "doc" label names (path, then file name)."""
    for info in docs:
        if label in (info.path, info.last_path):
            return info.id
    for info in docs:
        if Path(label).name in (Path(info.path).name, Path(info.last_path or info.path).name):
            return info.id
    return docs[0].id if docs else 0


def citations_from(data: dict, docs: list) -> list[Citation]:
    out = []
    for c in data.get("citations") or []:
        label = str(c.get("doc", ""))
        out.append(Citation(_doc_id(label, docs), label, int(c.get("page", 1)), str(c.get("quote", "")),
                            bool(c.get("verified")), note=str(c.get("note", ""))))
    return out


def evidence_from(question: str, data: dict, docs: list):
    """The evidence cards an answer was shown with (its JSON's "evidence"), or None."""
    from app.core.answer.evidence import Evidence, EvidenceCard
    found = data.get("evidence")
    if not isinstance(found, dict):
        return None
    cards = []
    for c in found.get("cards") or []:
        label = str(c.get("doc", ""))
        cards.append(EvidenceCard(_doc_id(label, docs), label, 1, int(c.get("page", 1)), str(c.get("quote", "")),
                                  str(c.get("clause", "")), float(c.get("score", 0.0)), 0.0))
    return Evidence(question, cards, bool(found.get("addressed", True)), float(found.get("ms", 0.0)),
                    no_figure=bool(found.get("no_figure")))


def entries(exchanges: list, docs: list) -> list[Entry]:
    """Transcript entries for stored exchanges; a damaged record shows as such, not a crash."""
    result = []
    for ex in exchanges:
        try:
            data = json.loads(ex.answer_json)
        except ValueError:
            result.append(Entry(ex.question, meta="(stored answer unreadable)", state="failed"))
            continue
        text, cut = readable_answer(str(data.get("answer", "")))
        result.append(Entry(ex.question, text, citations_from(data, docs), meta=stored_meta(data, ex, cut),
                            state="done", evidence=evidence_from(ex.question, data, docs),
                            headline=_stored_headline(data), shown_as=str(data.get("status", "")),
                            data=data, when=ex.created_at))
    return result


def _stored_headline(data: dict) -> str:
    """A stored review without a headline (kept before reviews had one) never leads."""
    default = "evidence" if str(data.get("mode", "")).startswith("review") else "answer"
    return str(data.get("headline", default))


def stored_meta(data: dict, ex, cut: bool = False) -> str:
    """The line under a restored answer: its timings and model as when it was given, then its
    warnings, as meta_line said them."""
    timing, engine = data.get("timing") or {}, data.get("engine") or {}
    parts = timing_parts(str(data.get("mode", "")), _number(timing.get("ttft_s")), _number(timing.get("total_s")),
                         str(engine.get("model") or ""))
    unverified = sum(1 for c in data.get("citations") or [] if not c.get("verified"))
    if unverified:
        parts.append(f"{unverified} unverified citation{'s' if unverified > 1 else ''}")
    if cut:
        parts.append("answer cut off")
    if ex.created_at < _STARTED:
        parts.append("earlier session")
    warnings = [str(w) for w in data.get("warnings") or [] if str(w).strip()]
    return "\n".join([" · ".join(parts)] + warnings)


def _number(value) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None
