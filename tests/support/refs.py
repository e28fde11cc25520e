"""A question's references for tests: documents added to a library."""
from __future__ import annotations

from app.core.answer.refs import DocRef


def refs_for(lib, path) -> list[DocRef]:
    """One document, added to the library, as a question's reference."""
    return [DocRef(1, lib.add(path).id, str(path))]
