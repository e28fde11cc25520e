"""The line under a pane's toolbar: ingestion warnings and "too long for the context".

Counting a 500-page document's tokens takes a moment, so it runs as a job and is
remembered per document.
"""
from __future__ import annotations

from pathlib import Path

from app.core.answer import budget
from app.qt import workers

_TOKENS: dict[str, int] = {}     # document SHA-256 → estimated tokens of its whole text (ids are per library)


def _count(ctx, library, doc_id: int) -> int:
    return sum(budget.estimate_tokens(p.text) for p in library.pages(doc_id))


def too_long_line(pages: int, tokens: int, context_tokens: int) -> str:
    """'212 pages ≈ 70K tokens > 32K context: answers use the most relevant passages', or ''."""
    if not context_tokens or tokens <= budget.document_room(context_tokens):
        return ""
    return (f"{pages} pages ≈ {tokens / 1000:.0f}K tokens > {context_tokens // 1024}K context: "
            "answers use the most relevant passages")


def compose(info, tokens: int | None, context_tokens: int) -> str:
    parts = [f"⚠ {w}" for w in info.warnings]
    if tokens is not None:
        line = too_long_line(info.page_count, tokens, context_tokens)
        if line:
            parts.append(f"ℹ {line}")
    return "\n".join(parts)


def update(library, pane, info, context_tokens: int) -> None:
    """Set the pane's notice now, and again once the token count is known."""
    pane.set_notice(compose(info, _TOKENS.get(info.sha256), context_tokens))
    if info.sha256 in _TOKENS or not context_tokens:
        return

    def done(tokens: int) -> None:
        _TOKENS[info.sha256] = tokens
        shown = Path(pane.path).resolve() if pane.path else None
        from app.core.documents import ocr   # a scan is shown from its OCR copy
        if shown in (Path(info.path).resolve(), Path(info.last_path or info.path).resolve(),
                     ocr.copy_path(info.sha256).resolve()):
            pane.set_notice(compose(info, tokens, context_tokens))

    workers.run(_count, library, info.id, on_done=done, on_error=lambda exc: None)
