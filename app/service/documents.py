"""The documents a question is about, as both front-ends name them."""
from __future__ import annotations

from app.core.answer.refs import DocRef


def doc_refs(infos, labels: list[str] | None = None) -> list[DocRef]:
    """The documents numbered from 1 as the prompt numbers them, each labelled by the path the
    user gave (`labels`, the command line's) or the file's last known place (the window's)."""
    labels = labels or [info.last_path or info.path for info in infos]
    return [DocRef(n, info.id, label) for n, (info, label) in enumerate(zip(infos, labels), start=1)]
