"""`pagewise diff OLD.pdf NEW.pdf`: the Bonterms PSA 1.1 (rendered from its markdown source) against
the publisher's own 1.2 PDF from the corpus: the change list as JSON and text, its Markdown and
PDF memo opened and read back; bad input is one line, like every command."""
from __future__ import annotations

import json

import pymupdf
import pytest

from tests.e2e.test_cli import CORPUS, home, pagewise  # noqa: F401 - the fixture
from tests.support.versions_pdf import render_version, words_in

NEW = str(CORPUS / "contracts-en/bonterms-psa-v1.2.pdf")


@pytest.fixture(scope="module")
def old(tmp_path_factory):
    return str(render_version("bonterms-psa-v1.1", tmp_path_factory.mktemp("versions")))


def test_diff_json_lists_the_changes_material_first(home, old, tmp_path):  # noqa: F811
    md, memo = tmp_path / "redline.md", tmp_path / "redline.pdf"
    res = pagewise("diff", old, NEW, "--json", "--markdown", str(md), "--pdf", str(memo), home=home)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["old"] == old and data["new"] == NEW
    assert data["counts"] == {"changed": 5, "added": 0, "removed": 0, "moved": 0, "unchanged": 119}
    names = [c["name"] for c in data["changes"]]
    assert {n.split()[0] for n in names} == {"(opening)", "2.7", "2.27", "6.3", "10.6"}
    assert names.index("6.3 Assigned Deliverables") < names.index("10.6 Taxes")
    taxes = data["changes"][names.index("10.6 Taxes")]
    assert taxes["status"] == "changed" and not taxes["material"]
    assert taxes["deleted"][0]["text"] == "its" and taxes["inserted"][0]["text"] == "the"
    assert taxes["new"]["page"] == 7 and taxes["edits"][0]["text"].startswith("levies that apply to [-its-] {+the+}")
    assert words_in(NEW, 7, taxes["inserted"][0]["rects"]) == "the"     # lit on its page
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# What changed: bonterms-psa-v1.1.pdf → bonterms-psa-v1.2.pdf") and "10.6 Taxes" in text
    with pymupdf.open(memo) as doc:
        assert "6.3 Assigned Deliverables" in doc[0].get_text()


def test_diff_text_for_people(home, old):  # noqa: F811
    res = pagewise("diff", old, NEW, home=home)
    assert res.returncode == 0, res.stderr
    first, *rest = res.stdout.splitlines()
    assert first.startswith("bonterms-psa-v1.1.pdf → bonterms-psa-v1.2.pdf: 5 changed, 0 added")
    assert "  old p. 8, new p. 7: \u201clevies that apply to [-its-] {+the+} Services, whether domestic or\u201d" in rest


@pytest.mark.parametrize("args, words", [((NEW,), "two PDF files"),
                                         ((NEW, NEW, NEW), "two PDF files"),
                                         ((NEW, "no/such/file.pdf"), "no/such/file.pdf"),
                                         ((NEW, str(CORPUS / "bad/not-a-pdf-png.pdf")), "not a PDF"),
                                         ((str(CORPUS / "bad/scanned-image-only-en.pdf"), NEW), "no text layer"),
                                         ((str(CORPUS / "bad/encrypted-user-password.pdf"), NEW), "password")])
def test_diff_bad_input_is_one_line(home, args, words):  # noqa: F811
    res = pagewise("diff", *args, "--json", home=home)
    assert res.returncode != 0 and "Traceback" not in res.stderr + res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], res.stderr
