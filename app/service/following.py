"""A conversation's documents as the library holds them now: another process may remove one
(or add it back, under a new id) between two questions."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from app.failure_messages import UserError


@dataclass(frozen=True)
class LibraryChanged:
    """Said to the user before the next question: documents removed, or added back."""
    removed: tuple[str, ...] = ()
    back: tuple[str, ...] = ()


def follow_library(lib, given, conv, asked_ids, tell: Callable[[LibraryChanged], None] | None = None):
    """`given`: the (info, ref) pairs first asked. Returns the infos, refs and conversation to
    ask now: one removed is left out (and comes back, under its new id, if it is added again);
    when the set changes the conversation starts afresh. None left: a one-line error."""
    infos, refs, removed = [], [], []
    for info, ref in given:
        now = lib.find_sha(info.sha256)
        if now is None:
            if info.id in asked_ids:
                removed.append(ref.label)
            continue
        if now != info.id:
            info = lib.get(now)
        infos.append(info)
        refs.append(type(ref)(len(refs) + 1, info.id, ref.label))
    if removed and tell:
        tell(LibraryChanged(removed=tuple(removed)))
    if not infos:
        raise UserError("every document of this conversation was removed from the library")
    ids = [i.id for i in infos]
    if ids != asked_ids:
        back = [r.label for r in refs if r.doc_id not in asked_ids]
        if back and tell:
            tell(LibraryChanged(back=tuple(back)))
        conv = type(conv)()
    return infos, refs, conv
