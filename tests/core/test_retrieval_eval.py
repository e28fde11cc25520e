"""Page recall@5 on shared/eval/dev.jsonl, in-document setting (only the question's docs)."""
from __future__ import annotations

from tests.support.corpus import dev_questions


def test_in_document_recall_at_5(corpus_library):
    lib, ids = corpus_library
    found = {"en": [], "zh": []}
    for q in dev_questions():
        if not q["gold"]:
            continue
        gold = {(ids[g["doc"]], g["page"]) for g in q["gold"]}
        hits = lib.search(q["question"], doc_ids=[ids[d] for d in q["docs"]], k=5)
        found[q["lang"]].append(any((h.doc_id, h.page) in gold for h in hits))
    rates = {lang: sum(v) / len(v) for lang, v in found.items()}
    overall = sum(sum(v) for v in found.values()) / sum(len(v) for v in found.values())
    print(f"\nin-document page recall@5: all {overall:.2f}, "
          + ", ".join(f"{k} {v:.2f} (n={len(found[k])})" for k, v in rates.items()))
    assert overall >= 0.85 and min(rates.values()) >= 0.75
