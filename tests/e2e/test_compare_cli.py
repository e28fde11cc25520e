"""`pagewise compare A.pdf B.pdf --json` on real corpus contracts (issue 33): per topic, per
document, the clause heading, the quote as printed, its page and whether it verified — from
the search alone, no engine; bad input is one line, like every command."""
from __future__ import annotations

import json

import pymupdf
import pytest

from app.core.answer.citations import verify
from tests.e2e.test_cli import CORPUS, home, pagewise  # noqa: F401 - the fixture

CSA = str(CORPUS / "contracts-en/common-paper-csa.pdf")
CLOUD = str(CORPUS / "contracts-en/bonterms-cloud-terms-v1.0.pdf")


def test_compare_json_gives_each_topics_clause_in_both_documents(home):  # noqa: F811
    res = pagewise("compare", CSA, CLOUD, "--json", home=home)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["question"].startswith("Compare clauses: termination, liability")
    assert [t["topic"] for t in data["topics"]] == ["termination", "liability", "payment",
                                                     "confidentiality", "governing law"]
    for topic in data["topics"]:
        assert [d["doc"] for d in topic["documents"]] == [CSA, CLOUD]
        for cell in topic["documents"]:
            assert cell.keys() == {"doc", "found", "clause", "quote", "page", "verified"}
            assert cell["found"] and cell["verified"], (topic["topic"], cell)
            with pymupdf.open(cell["doc"]) as doc:          # the PDF's own text, not the library's
                pages = {cell["page"]: doc[cell["page"] - 1].get_text()}
            assert verify(1, cell["doc"], cell["page"], cell["quote"], pages).verified, cell
    payment = data["topics"][2]["documents"][1]
    assert payment["page"] == 2 and "Section 12" in payment["clause"]       # Cloud Terms 12.1 Fees
    law = data["topics"][4]["documents"]
    assert "Governing Law" in law[0]["clause"] and law[0]["page"] == 8
    assert "model" not in data                                              # no --summary: no engine


def test_compare_text_and_topics(home):  # noqa: F811
    res = pagewise("compare", CSA, CLOUD, "--topics", "confidentiality", "governing law", home=home)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("Compare clauses: confidentiality, governing law")
    assert "termination" not in out.split("\n")[0] and out.count("[verified]") == 4


@pytest.mark.parametrize("args, words", [((CSA,), "two PDF files"),
                                         ((CSA, CLOUD, CSA), "named twice"),
                                         ((CSA, "no/such/file.pdf"), "no/such/file.pdf")])
def test_compare_bad_input_is_one_line(home, args, words):  # noqa: F811
    res = pagewise("compare", *args, "--json", home=home)
    assert res.returncode != 0 and "Traceback" not in res.stderr + res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], res.stderr


def test_compare_three_documents_as_csv_and_markdown(home, tmp_path):  # noqa: F811
    import csv
    import io
    mnda = str(CORPUS / "contracts-en/common-paper-mnda.pdf")
    md = tmp_path / "table.md"
    res = pagewise("compare", CSA, CLOUD, mnda, "--topics", "payment", "governing law", "--csv",
                   "--markdown", str(md), home=home)
    assert res.returncode == 0, res.stderr
    rows = list(csv.reader(io.StringIO(res.stdout)))
    assert rows[0] == ["topic", CSA, CLOUD, mnda] and [r[0] for r in rows[1:]] == ["payment", "governing law"]
    assert rows[1][3] == "not found" and rows[2][3].startswith("p. 4 · ")      # an NDA: no payment clause
    assert all(cell.startswith("p. ") for cell in rows[1][1:3] + rows[2][1:])
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Compare clauses: payment, governing law") and "| not found |" in text
