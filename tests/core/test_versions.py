"""What changed between versions of a contract: real successive versions (Bonterms PSA 1.0, 1.1,
1.2 rendered from their markdown sources, and the publisher's own 1.2 PDF from the corpus, laid
out differently; Common Paper's Cloud Service Agreement v1 and v2, renumbered throughout; the
PRC Charity Law of 2016 and its 2023 revision),
measured against the change list the sources themselves give (tests/support/versions_pdf.py)."""
from __future__ import annotations

import pymupdf
import pytest

from app.core.compare.materiality import kinds_of
from app.core.compare.redline_export import to_markdown, to_pdf, to_text
from app.core.compare.versions import diff_files
from app.core.documents.structure import cn_to_int
from tests.support.corpus import corpus_path
from tests.support.versions_pdf import articles, gold_changes, render_version, renumbered, touched_articles, words_in

PAIRS = [("bonterms-psa-v1.0", "bonterms-psa-v1.1"), ("bonterms-psa-v1.1", "bonterms-psa-v1.2"),
         ("bonterms-psa-v1.0", "bonterms-psa-v1.2")]
PUBLISHED = "contracts-en/bonterms-psa-v1.2.pdf"     # the publisher's PDF (Acrobat), not our rendering


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("versions")


def changed_keys(redline) -> set[str]:
    """Clause numbers the redline says changed (any status but unchanged); the opening is "0"."""
    return {(p.new or p.old).key or "0" for p in redline.pairs if p.status != "unchanged"}


def _scores(found: set[str], gold: set[str]) -> tuple[float, float]:
    hit = len(found & gold)
    return hit / len(gold), hit / len(found) if found else 1.0


@pytest.mark.parametrize("old, new, published", [(*p, False) for p in PAIRS]
                         + [("bonterms-psa-v1.0", "bonterms-psa-v1.2", True),
                            ("bonterms-psa-v1.1", "bonterms-psa-v1.2", True)])
def test_changed_clauses_found_against_the_sources_own_change_list(folder, old, new, published):
    new_pdf = corpus_path(PUBLISHED) if published else render_version(new, folder)
    redline = diff_files(render_version(old, folder), new_pdf)
    gold = gold_changes(old, new)
    assert not gold["added"] and not gold["removed"]
    recall, precision = _scores(changed_keys(redline), set(gold["changed"]))
    assert recall >= 0.95 and precision >= 0.95, (sorted(changed_keys(redline)), gold["changed"])
    assert redline.counts()["added"] == redline.counts()["removed"] == 0
    assert len(redline.pairs) == 124                # 123 numbered clauses and the opening, each paired


def test_the_same_version_has_no_changes(folder):
    pdf = render_version("bonterms-psa-v1.1", folder)
    redline = diff_files(pdf, pdf)
    assert redline.changes() == [] and redline.counts()["unchanged"] == 124


def test_renumbered_clauses_are_matched(folder):
    """CSA v1 → v2: the sources' 41 clauses that kept their heading under a new number."""
    old, new = "common-paper-csa-v1", "common-paper-csa-v2"
    redline = diff_files(render_version(old, folder), render_version(new, folder))
    gold = renumbered(old, new)
    assert len(gold) >= 40 and gold["1.3"] == "1.2"               # 1.2 Service Level was dropped
    paired = {p.old.key: p.new.key for p in redline.pairs if p.old and p.new}
    matched = sum(paired.get(k) == v for k, v in gold.items())
    assert matched / len(gold) >= 0.95, {k: (v, paired.get(k)) for k, v in gold.items() if paired.get(k) != v}
    support = next(p for p in redline.pairs if p.old and p.old.key == "1.3")
    assert support.renumbered and support.name().startswith("1.3 → 1.2 Support")
    same = [p for p in redline.pairs if p.renumbered and p.status == "moved"]
    assert same and all(p.old.norms == p.new.norms for p in same)   # renumbered, not reworded
    assert {"added", "removed"} <= {p.status for p in redline.pairs}


def test_deleted_and_inserted_words_lit_on_their_real_pages(folder):
    """Each phrase's rectangles hold exactly its words on its page: the deleted ones on the old
    version, the inserted ones on the new (the publisher's PDF, its own layout)."""
    old_pdf, new_pdf = render_version("bonterms-psa-v1.1", folder), corpus_path(PUBLISHED)
    redline = diff_files(old_pdf, new_pdf)
    changed = [p for p in redline.pairs if p.status == "changed"]
    assert changed
    for pair in changed:
        for phrase in pair.deleted:
            assert words_in(old_pdf, phrase.page, phrase.rects) == phrase.text, (pair.name(), phrase)
            assert phrase.page in pair.old.pages
        for phrase in pair.inserted:
            assert words_in(new_pdf, phrase.page, phrase.rects) == phrase.text, (pair.name(), phrase)
            assert phrase.page in pair.new.pages
    taxes = next(p for p in changed if p.new.key == "10.6")
    assert [x.text for x in taxes.deleted] == ["its"] and [x.text for x in taxes.inserted] == ["the"]
    assert taxes.new.page == 7 and taxes.old.title == "Taxes"


def test_material_changes_come_first(folder):
    redline = diff_files(render_version("bonterms-psa-v1.1", folder), corpus_path(PUBLISHED))
    order = [p.new.key for p in redline.changes()]
    assigned = next(p for p in redline.changes() if p.new.key == "6.3")
    assert "party" in assigned.kinds and "Customer" in [x.text for x in assigned.inserted]
    assert order.index("6.3") < order.index("10.6") and order.index("2.7") < order.index("2.27")
    assert [p.material for p in redline.changes()] == sorted((p.material for p in redline.changes()), reverse=True)


@pytest.mark.parametrize("deleted, inserted, kind", [
    (["may"], ["must"], "obligation"), (["30"], ["60"], "number"), (["thirty", "days"], ["two", "months"], "duration"),
    (["Customer"], ["Provider"], "party"), (["12", "months", "of", "fees"], ["uncapped"], "cap"),
    (["可以"], ["应当"], "obligation")])
def test_material_kinds(deleted, inserted, kind):
    assert kind in kinds_of(deleted, inserted)


def test_a_reworded_sentence_is_not_material():
    assert kinds_of(["its"], ["the"]) == [] and kinds_of(["action,"], ["Action,"]) == []


def test_exports_list_changes_with_both_pages(folder, tmp_path):
    redline = diff_files(render_version("bonterms-psa-v1.1", folder), corpus_path(PUBLISHED))
    taxes = next(p for p in redline.pairs if p.new.key == "10.6")
    assert [e.to_dict() for e in taxes.edits] == [{"text": "levies that apply to [-its-] {+the+} Services, whether "
                                                           "domestic or", "old_page": 8, "new_page": 7}]
    md = to_markdown(redline)
    assert md.startswith("# What changed: bonterms-psa-v1.1.pdf → bonterms-psa-v1.2.pdf")
    assert "**changed: 10.6 Taxes (old p. 8 → new p. 7)**" in md
    assert "old p. 8, new p. 7: “levies that apply to ~~its~~ **the** Services" in md
    assert md.index("6.3 Assigned Deliverables") < md.index("10.6 Taxes")
    assert "levies that apply to [-its-] {+the+} Services" in to_text(redline)
    pdf = to_pdf(redline, tmp_path / "redline.pdf")
    with pymupdf.open(pdf) as doc:
        text = " ".join(" ".join(page.get_text().split()) for page in doc)
        assert doc.metadata["title"].startswith("What changed") and "10.6 Taxes" in text
        assert "levies that apply to its the Services" in text
    data = redline.to_dict()
    assert data["counts"]["changed"] == 5 and data["changes"][0]["material"]
    taxes = next(c for c in data["changes"] if c["new"] and c["new"]["clause"] == "10.6")
    assert taxes["inserted"][0]["page"] == 7 and len(taxes["inserted"][0]["rects"][0]) == 4


def test_a_revised_chinese_law_article_by_article(folder):
    """慈善法 2016 → 2023 (112 → 125 articles): the articles whose words are nowhere in the other
    version are the changed, added or repealed ones; those kept word for word under a new number
    (第二十七条 → 第二十八条) are paired; the words compared character by character."""
    old, new = "charity-law-2016", "charity-law-2023"
    redline = diff_files(render_version(old, folder), render_version(new, folder))
    gone, fresh, kept = touched_articles(old, new)
    num = {a: str(cn_to_int(a)) for a in articles(old) | articles(new)}

    def touched(side: str, statuses: tuple[str, ...]) -> set[str]:
        return {getattr(p, side).key for p in redline.pairs
                if getattr(p, side) is not None and getattr(p, side).key.isdigit() and p.status in statuses}
    for found, gold in ((touched("old", ("changed", "removed")), {num[a] for a in gone}),
                        (touched("new", ("changed", "added")), {num[a] for a in fresh})):
        recall, precision = _scores(found, gold)
        assert recall >= 0.95 and precision >= 0.95, (sorted(found - gold), sorted(gold - found))
    paired = {p.old.key: p.new.key for p in redline.pairs if p.old and p.new}
    assert len(kept) >= 40 and all(paired.get(num[a]) == num[b] for a, b in kept.items())
    moved = next(p for p in redline.pairs if p.old and p.old.key == "27")
    assert moved.status == "moved" and moved.name().startswith("第二十七条 → 第二十八条")
    assert redline.counts()["added"] >= 10
