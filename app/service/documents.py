"""The documents a question is about, as both front-ends name them."""
from __future__ import annotations

from app.core.answer.refs import DocRef
from app.core.library.library import path_text


def doc_refs(infos, labels: list[str] | None = None) -> list[DocRef]:
    """The documents numbered from 1 as the prompt numbers them, each labelled by the path the
    user gave (`labels`, the command line's) or the file's last known place (the window's), in the
    library's text form: a name that is not UTF-8 has its odd bytes written \\xe9, since the label
    goes into the answer and the answer is stored as UTF-8 text."""
    labels = labels or [info.last_path or info.path for info in infos]
    return [DocRef(n, info.id, path_text(label)) for n, (info, label) in enumerate(zip(infos, labels), start=1)]
