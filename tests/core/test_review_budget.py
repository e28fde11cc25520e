"""A review's parts keep a question's first-token budget: at a slow measured speed a part
holds fewer pages (each step still answers within the target), at a fast one the usual ~5."""
from __future__ import annotations

from app.core.answer import qa, review
from app.core.answer.budget import time_budget_tokens
from tests.support.corpus import long_contract


def test_parts_shrink_to_the_time_budget_of_a_slow_machine(tmp_path, lib):
    doc = tmp_path / "bundle.pdf"
    pages = long_contract(doc)
    info = lib.add(doc)
    ref = qa.DocRef(1, info.id, str(doc))
    note = review.NOTE_TASK["en"].format(task=review.task_text("deadlines", "en"))
    # no engine: the same token estimate a remote endpoint without /tokenize gets
    fast_room = time_budget_tokens(10, 2000, 32768)        # a GPU-class reader: the context limits
    slow_room = time_budget_tokens(10, 150, 32768)         # a 7B on a laptop CPU: 1,200 tokens
    fast = review.plan_parts(lib, [ref], None, fast_room, note)
    slow = review.plan_parts(lib, [ref], None, slow_room, note)
    assert slow_room == 1200 and fast_room > 5 * slow_room
    for parts in (fast, slow):                  # every page in exactly one part, in order
        covered = [p for part in parts for p in range(part.first_page, part.last_page + 1)]
        assert covered == list(range(1, pages + 1))
    assert all(p.last_page - p.first_page == 4 for p in fast[:-1])          # the usual 5 pages
    assert len(slow) > 2 * len(fast)
    assert all(p.tokens <= slow_room for p in slow if p.last_page > p.first_page)   # one page may exceed it


def test_a_part_verifies_a_repeated_sentence_on_its_own_pages(tmp_path, lib):
    # "This Agreement may be signed in counterparts…" stands on pp. 9, 21 and 30 of the bundle
    # (three Common Paper agreements): cited from part pp. 21-25 with a wrong page number, it
    # is found on p. 21, not on p. 9 (where it was found before, and the citation dropped)
    doc = tmp_path / "bundle.pdf"
    long_contract(doc)
    info = lib.add(doc)
    ref = qa.DocRef(1, info.id, str(doc))
    page21 = " ".join(lib.page_text(info.id, 21).split())
    start = page21.index("This Agreement may be signed in counterparts")
    quote = page21[start:start + 90].rsplit(" ", 1)[0]
    part = review.Part(5, ref, 21, 25)
    kept = review.part_citations(lib, part, [{"doc": 1, "page": 24, "quote": quote}])
    other = review.part_citations(lib, review.Part(2, ref, 6, 10), [{"doc": 1, "page": 7, "quote": quote}])
    elsewhere = review.part_citations(lib, review.Part(3, ref, 11, 15), [{"doc": 1, "page": 12, "quote": quote}])
    assert [(c.page, c.verified) for c in kept] == [(21, True)] and "page corrected from 24" in kept[0].note
    assert [c.page for c in other] == [9]
    assert elsewhere == []            # not on pp. 11-15: not kept, not moved to another part
