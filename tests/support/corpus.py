"""Where the test corpus lives (../shared/corpus, or PAGEWISE_CORPUS), and what a test that needs
it does when it is missing: fail under ./run-tests and CI (they promise it, tests/support/strict.py),
skip with the reason on a developer machine without it."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NoReturn

import pymupdf

from tests.support import ROOT
from tests.support.strict import unavailable

CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
EVAL = CORPUS.parent / "eval" / "dev.jsonl"


def missing(path: Path) -> NoReturn:
    """A file or folder of the corpus is not there: a one-line failure or skip, by strict()."""
    unavailable(f"corpus not found: {path} (set PAGEWISE_CORPUS)")


def corpus_path(rel: str = "") -> Path:
    """CORPUS / rel, which must exist (fails or skips otherwise)."""
    path = CORPUS / rel
    if not path.exists():
        missing(path)
    return path


def corpus_files() -> list[Path]:
    """Every good corpus PDF (bad/ excluded), in a stable order; never an empty list."""
    files = sorted(p for p in corpus_path().glob("*/*.pdf") if p.parent.name != "bad")
    if not files:
        missing(CORPUS / "*" / "*.pdf")
    return files


def dev_questions() -> list[dict]:
    """The evaluation questions (../shared/eval/dev.jsonl next to the corpus)."""
    if not EVAL.is_file():
        missing(EVAL)
    return [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]


# six contracts, one after another: a 49-page document for the review tests
LONG_CONTRACT_PARTS = ["common-paper-csa.pdf", "common-paper-software-license.pdf", "common-paper-partnership.pdf",
                       "common-paper-dpa.pdf", "common-paper-mnda.pdf", "bonterms-dpa-v1.0.pdf"]


def long_contract(path: Path, parts: list[str] = LONG_CONTRACT_PARTS) -> int:
    """Write the contracts (by default the six, 49 pages) into one PDF at `path`; returns its page count."""
    out = pymupdf.open()
    for name in parts:
        with pymupdf.open(corpus_path(f"contracts-en/{name}")) as doc:
            out.insert_pdf(doc)
    count = out.page_count
    out.save(path)
    out.close()
    return count
