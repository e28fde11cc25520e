"""Compare clauses from the search alone (issue 33): each topic's best clause of each document,
quoted as printed and verified on its page, in English contracts and Chinese laws; the topics
as typed in either language; the model's row kept only when its citations back it."""
from __future__ import annotations

import csv
import io
from types import SimpleNamespace

from app.core.answer.citations import verify
from app.core.answer.evidence import EvidenceCard
from app.core.answer.refs import DocRef
from app.core.compare import compare_clauses, parse_topics, short_question
from app.core.compare.clauses import best_clause, is_definition
from app.core.compare.summary import model_prompt, model_row


def _refs(lib, ids, *names):
    return [DocRef(n, ids[name], name) for n, name in enumerate(names, 1)]


def _check_verified(lib, table):
    for row in table.rows:
        for cell in row:
            if cell.card is not None:
                pages = {p.number: p.text for p in lib.pages(cell.ref.doc_id)}
                assert cell.verified and verify(cell.ref.doc_id, cell.ref.label, cell.card.page,
                                                cell.card.quote, pages).verified, cell


def test_two_english_contracts_side_by_side(corpus_library):
    lib, ids = corpus_library
    refs = _refs(lib, ids, "contracts-en/common-paper-mnda.pdf", "contracts-en/bonterms-psa-v1.2.pdf")
    table = compare_clauses(lib, refs, parse_topics(None))
    assert table.question == "Compare clauses: termination, liability, payment, confidentiality, governing law"
    _check_verified(lib, table)
    term, _, payment, conf, law = table.rows
    assert "Termination" in term[0].card.clause and "terminate" in term[0].card.quote
    assert "Termination" in term[1].card.clause
    assert payment[0].card is None                      # an NDA has no payment clause: "not found"
    assert payment[1].card is not None and "pay" in payment[1].card.quote
    assert "Confidential" in conf[0].card.quote and "Confidential" in conf[1].card.quote
    assert law[0].card.clause == "Section 9 Governing Law and Jurisdiction" and law[0].card.page == 4
    assert "Governing Law" in law[1].card.clause
    data = table.to_dict()
    assert data["topics"][2]["documents"][0] == {"doc": refs[0].label, "found": False, "clause": "",
                                                 "quote": "", "page": None, "verified": False}
    assert table.evidence().cards == table.cards() and table.evidence().question == table.question


def test_two_chinese_laws_side_by_side(corpus_library):
    lib, ids = corpus_library
    refs = _refs(lib, ids, "contracts-zh/labor-contract-law.pdf", "contracts-zh/civil-code-book3-contracts.pdf")
    table = compare_clauses(lib, refs, parse_topics("解除、保密"))
    assert table.question == "条款对比：解除、保密" and table.lang == "zh"
    _check_verified(lib, table)
    term, conf = table.rows
    assert all(c.card.clause.startswith("第") or c.card.clause.startswith("（") for c in term)
    assert conf[0].card.clause == "第二十三条" and conf[0].card.page == 3
    assert conf[1].card.clause == "第五百零一条" and "商业秘密" in conf[1].card.quote


def test_topics_as_typed():
    assert [t.key for t in parse_topics("Termination, liability and payment")] == \
        ["termination", "liability", "payment"]
    assert [t.key for t in parse_topics("解除、保密和适用法律")] == ["termination", "confidentiality", "governing law"]
    assert [t.key for t in parse_topics(["warranty", "payment"])] == ["warranty", "payment"]
    assert short_question(parse_topics("termination, warranty")) == "Compare clauses: termination, warranty"


def _card(quote, clause, score, share=0.5):
    return EvidenceCard(1, "a.pdf", 1, 1, quote, clause, score, share)


def test_the_clause_naming_the_topic_beats_a_definition_of_its_term():
    topic = parse_topics("confidentiality")[0]
    definition = _card('13.8 "Confidential Information" means information in any form disclosed.', "Section 13.8", 1.3)
    clause = _card("Each Recipient will protect the Discloser's Confidential Information.", "Section 12 Confidentiality", 1.1)
    assert is_definition(definition.quote) and not is_definition(clause.quote)
    assert best_clause(topic, [definition, clause]) is clause
    assert best_clause(topic, [definition, clause], heading_bonus=0, definition_penalty=0) is definition
    assert best_clause(topic, [_card("Nothing here.", "", 2.0, share=0.0)]) is None


def test_the_model_row_only_when_its_citations_back_it(corpus_library):
    lib, ids = corpus_library
    refs = _refs(lib, ids, "contracts-en/common-paper-csa.pdf", "contracts-en/bonterms-cloud-terms-v1.0.pdf")
    table = compare_clauses(lib, refs, parse_topics("governing law"))
    prompt = model_prompt(table)
    assert "governing law" in prompt and "document 2" in prompt and "Section 12.3" in prompt
    card = table.cards()[0].citation()
    backed = SimpleNamespace(supported=True, text="Both pick a governing law.",
                             citations=[SimpleNamespace(verified=True, to_dict=lambda: {"page": card.page})])
    assert model_row(backed) == {"summary": "Both pick a governing law.", "citations": [{"page": card.page}]}
    assert model_row(SimpleNamespace(supported=False, text="x", citations=[])) is None
    assert model_row(None) is None


def test_nine_contracts_in_one_table(corpus_library):
    """One row per topic, one column per document, every quote verified on its page; the
    same engine as two documents: the first two columns are the two-document table's."""
    from app.core.compare.table_export import NOT_FOUND, to_csv, to_markdown
    lib, ids = corpus_library
    names = sorted(n for n in ids if n.startswith("contracts-en/"))
    assert len(names) == 9
    refs = _refs(lib, ids, *names)
    table = compare_clauses(lib, refs, parse_topics(None))
    _check_verified(lib, table)
    assert [len(row) for row in table.rows] == [9] * 5
    assert [c.ref for c in table.rows[0]] == refs
    found = [c for row in table.rows for c in row if c.card is not None]
    assert len(found) >= 40
    mnda = names.index("contracts-en/common-paper-mnda.pdf")
    assert table.rows[2][mnda].card is None                     # an NDA has no payment clause
    pair = compare_clauses(lib, refs[:2], parse_topics(None))
    assert [[c.card for c in row] for row in pair.rows] == [[c.card for c in row[:2]] for row in table.rows]
    data = table.to_dict()
    assert [len(t["documents"]) for t in data["topics"]] == [9] * 5
    rows = list(csv.reader(io.StringIO(to_csv(table))))
    assert rows[0] == ["topic"] + names and [r[0] for r in rows[1:]] == [t.key for t in table.topics]
    assert rows[3][1 + mnda] == NOT_FOUND
    cell = table.rows[4][names.index("contracts-en/bonterms-psa-v1.2.pdf")]
    assert rows[5][1 + names.index("contracts-en/bonterms-psa-v1.2.pdf")].startswith(f"p. {cell.card.page} · ")
    md = to_markdown(table)
    assert md.startswith("# Compare clauses: termination") and md.count("\n| ") == 1 + 5
    assert "| common-paper-mnda.pdf |" in md.splitlines()[2] and "| not found |" in md.splitlines()[6]
