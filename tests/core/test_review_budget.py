"""A review's parts keep a question's first-token budget: at a slow measured speed a part
holds fewer pages (each step still answers within the target), at a fast one the usual ~5."""
from __future__ import annotations

from app.core.answer import qa, review
from app.core.answer.budget import time_budget_tokens
from app.core.library import Library
from tests.e2e.test_review import long_contract


def test_parts_shrink_to_the_time_budget_of_a_slow_machine(tmp_path):
    doc = tmp_path / "bundle.pdf"
    pages = long_contract(doc)
    lib = Library(tmp_path / "lib.sqlite")
    try:
        info = lib.add(doc)
        ref = qa.DocRef(1, info.id, str(doc))
        note = review.NOTE_TASK["en"].format(task=review.task_text("deadlines", "en"))
        # no engine: the same token estimate a remote endpoint without /tokenize gets
        fast_room = time_budget_tokens(10, 2000, 32768)        # a GPU-class reader: the context limits
        slow_room = time_budget_tokens(10, 150, 32768)         # a 7B on a laptop CPU: 1,200 tokens
        fast = review.plan_parts(lib, [ref], None, fast_room, note)
        slow = review.plan_parts(lib, [ref], None, slow_room, note)
    finally:
        lib.close()
    assert slow_room == 1200 and fast_room > 5 * slow_room
    for parts in (fast, slow):                  # every page in exactly one part, in order
        covered = [p for part in parts for p in range(part.first_page, part.last_page + 1)]
        assert covered == list(range(1, pages + 1))
    assert all(p.last_page - p.first_page == 4 for p in fast[:-1])          # the usual 5 pages
    assert len(slow) > 2 * len(fast)
    assert all(p.tokens <= slow_room for p in slow if p.last_page > p.first_page)   # one page may exceed it
