"""Damaged PDFs never lose text silently (issue 15.6): one flipped byte in a page's
content stream, and every page whose text vanished is named in the warnings."""
from __future__ import annotations

import json
import random

import pymupdf
import pytest

from app.core.documents.read_errors import Damaged
from app.core.documents.ingest import ingest
from app.core.documents.pdf import read_file
from tests.support.cli import run_cli
from tests.support.corpus import corpus_files

LOST = 0.5     # a page that kept less than this share of its text lost it


def flip_content_byte(src, dest, rng: random.Random) -> int:
    """Copy `src` to `dest` with one byte of one page's largest content stream inverted
    (the raw, usually Flate-compressed bytes as they lie in the file); returns the page."""
    data = src.read_bytes()
    with pymupdf.open(src) as doc:
        while True:
            number = rng.randrange(doc.page_count)
            streams = [doc.xref_stream_raw(x) for x in doc[number].get_contents()]
            raw = max(streams, key=len, default=b"")
            at = data.find(raw) if len(raw) >= 20 else -1
            if at >= 0:
                break
    out = bytearray(data)
    out[at + rng.randrange(len(raw))] ^= 0xFF
    dest.write_bytes(bytes(out))
    return number + 1


def mutants(tmp_path, count_per_file: int = 2, seed: int = 15):
    rng = random.Random(seed)
    for src in corpus_files():
        if src.stat().st_size > 400_000:     # keep the test quick: the big ones add nothing new
            continue
        for n in range(count_per_file):
            dest = tmp_path / f"{src.stem}-{n}.pdf"
            yield src, dest, flip_content_byte(src, dest, rng)


def test_every_page_that_lost_text_is_warned(corpus, tmp_path):
    tried = lost_pages = warned_lost = whole_files_lost = 0
    silent = []
    for src, dest, _ in mutants(tmp_path):
        tried += 1
        original = [p.text for p in ingest(read_file(src)).pages]
        try:
            result = ingest(read_file(dest))
        except Damaged:              # every page lost: refused, with its reason
            whole_files_lost += 1
            continue
        warned = {int(w.split(":")[0][3:]) for w in result.warnings if w.startswith("p. ")}
        for page, before in zip(result.pages, original):
            if len(page.text.strip()) < LOST * len(before.strip()):
                lost_pages += 1
                warned_lost += page.number in warned
                if page.number not in warned:
                    silent.append(f"{dest.name} p. {page.number}")
    print(f"\nfiles tried {tried}, pages that lost text {lost_pages}, warned {warned_lost}, "
          f"files refused as damaged {whole_files_lost}")
    assert tried >= 20 and lost_pages >= 5
    assert not silent, f"text lost without a warning: {silent}"


def test_an_emptied_page_is_named(corpus, tmp_path):
    """A flipped byte inside the Flate data of p. 5 of the MNDA empties it."""
    src = corpus / "contracts-en" / "common-paper-mnda.pdf"
    rng = random.Random(0)
    for attempt in range(40):
        dest = tmp_path / f"mnda-{attempt}.pdf"
        page = flip_content_byte(src, dest, rng)
        result = ingest(read_file(dest))
        if not result.pages[page - 1].text.strip():
            assert f"p. {page}: the page draws text but none could be extracted (damaged file?)" \
                in result.warnings
            return
    pytest.fail("no mutation emptied a page")


def test_index_prints_the_warnings_and_json_keeps_them(corpus, tmp_path, pagewise_home):
    src = corpus / "contracts-en" / "common-paper-mnda.pdf"
    rng = random.Random(0)
    for attempt in range(40):
        dest = tmp_path / f"mnda-{attempt}.pdf"
        page = flip_content_byte(src, dest, rng)
        if not ingest(read_file(dest)).pages[page - 1].text.strip():
            break
    run = run_cli("index", str(dest), "--no-dense", "--json")
    assert run.returncode == 0, run.stderr
    warnings = json.loads(run.stdout)["documents"][0]["warnings"]
    assert any(w.startswith(f"p. {page}: the page draws text") for w in warnings)
    assert f"p. {page}: the page draws text" in run.stderr
