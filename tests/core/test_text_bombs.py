"""PDFs under 2 MB whose pages decode or extract to gigabytes, indexed by a real `pagewise index`
process: its peak memory stays under 400 MB, it ends in time, and the page is named in a warning.

Before: a blank page (no text, no fonts) whose content stream inflates to 1 GiB → 969 MB
(text_loss decoded the whole stream to look for text operators); a 128 KB PDF drawing one 52 MB
string → 5.0 GB and over 300 s (MuPDF's text extraction keeps ~100 bytes per character).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import zlib

import pymupdf
import pytest

from app.core.documents import content_stream
from tests.support.cli import ROOT, app_argv

RSS_LIMIT_KB = 400 * 1024


def deflated(data_chunks) -> bytes:
    """Deflate piece by piece: the test itself never holds the inflated stream."""
    z, out = zlib.compressobj(9), []
    for chunk in data_chunks:
        out.append(z.compress(chunk))
    out.append(z.flush())
    return b"".join(out)


def pdf_with_stream(path, raw_deflated: bytes, with_font: bool):
    doc = pymupdf.open()
    page = doc.new_page()
    if with_font:
        page.insert_text((72, 72), "x")                       # a /F font resource for the string
    else:
        page.draw_line((0, 0), (1, 1))                        # a content stream, no text, no font
    xref = page.get_contents()[0]
    doc.update_stream(xref, raw_deflated, compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    doc.save(path)
    doc.close()
    return path


def blank_gigabyte_page(tmp_path):
    stream = deflated(b" " * (1 << 20) for _ in range(1024))  # 1 GiB of spaces
    return pdf_with_stream(tmp_path / "blank-bomb.pdf", stream, with_font=False)


def one_long_line(tmp_path, megabytes: int = 52):
    font = "helv"
    head = f"BT /{font} 1 Tf 10 700 Td (".encode()
    stream = deflated([head, *(b"A" * (1 << 20) for _ in range(megabytes)), b") Tj ET\n"])
    path = pdf_with_stream(tmp_path / "long-line.pdf", stream, with_font=True)
    with pymupdf.open(path) as doc:                           # the font really is named /helv there
        assert "helv" in str(doc[0].get_fonts()).lower()
    return path


# The index runs under a small Python that reports its child's peak RSS: measured on a child of
# pytest itself, the peak counted pytest's own pages (a fork is a copy until it execs), 727 MB
# for any PDF late in a full run.
_PEAK = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)")


def index_peak(path, home, timeout=240) -> tuple[int, int, str, float]:
    """`pagewise index PATH` as a real process: (rc, peak RSS in KiB, stderr, seconds)."""
    env = {**os.environ, "PAGEWISE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", _PEAK, *app_argv("index", str(path))], cwd=ROOT, env=env,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`pagewise index` still running after {timeout} s")
    peak_kb = int(proc.stdout.decode().split()[-1])
    return proc.returncode, peak_kb, proc.stderr.decode(errors="replace"), time.monotonic() - began


@pytest.mark.slow
@pytest.mark.parametrize("make", [blank_gigabyte_page, one_long_line])
def test_a_small_pdf_that_inflates_to_gigabytes_is_indexed_in_bounded_memory(tmp_path, make):
    path = make(tmp_path)
    assert path.stat().st_size < 2 << 20
    rc, peak_kb, err, seconds = index_peak(path, tmp_path / "home")
    assert "Traceback" not in err
    assert peak_kb < RSS_LIMIT_KB, f"peak {peak_kb // 1024} MB for a {path.stat().st_size // 1024} KB PDF"
    if make is one_long_line:
        assert "p. 1: not read" in err and len(err.strip().splitlines()) == 1, err


def test_the_measure_sees_the_long_string_and_not_ordinary_pages(tmp_path, corpus):
    with pymupdf.open(one_long_line(tmp_path, megabytes=3)) as doc:
        assert "characters" in (content_stream.too_much(doc[0]) or "")
    with pymupdf.open(corpus / "contracts-en" / "bonterms-psa-v1.2.pdf") as doc:
        assert all(content_stream.too_much(page) is None for page in doc)


def test_a_string_split_across_decoded_pieces_is_counted_whole(tmp_path):
    with pymupdf.open(one_long_line(tmp_path, megabytes=3)) as doc:
        seen = content_stream.measure(doc, doc[0].get_contents()[0])
    assert seen.chars == 3 << 20
