"""OCR speed and character accuracy on scanned renders of corpus pages (English, Chinese).

    .venv/bin/python benchmarks/ocr.py [--pages 3] [--rounds 1]

Speed (issue 31): the pages of each language are put in one image-only PDF and ingested (OCR as
the app runs it: pages in parallel, one Tesseract thread each); the baseline is the Tesseract
command run bare on the same renders (the 300-dpi grey PNGs the app makes), one page after the
other with the page's right language, once with its default threads and once with one thread
(OMP_THREAD_LIMIT=1). Ratio = app pages/s ÷ bare pages/s (target ≥ 0.9), measured side by side.

Each page is rendered with PyMuPDF at 150 dpi grey, saved as JPEG and put alone in an
image-only PDF (as corpus/bad/scanned-image-only-*.pdf were made, without the speckle);
ingestion OCRs it (app.core.documents.ocr, Tesseract) and the text is compared with the
page's original text layer: accuracy = 1 − edit distance / length, both sides without
whitespace (Tesseract's line breaks and CJK spacing are not errors a reader sees).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

PAGES = {"en": [("contracts-en/common-paper-mnda.pdf", 3), ("licenses/apache-2.0.pdf", 1),
                ("contracts-en/bonterms-psa-v1.2.pdf", 2), ("contracts-en/common-paper-csa.pdf", 4),
                ("licenses/gpl-3.0.pdf", 2), ("contracts-en/common-paper-dpa.pdf", 2)],
         "zh": [("contracts-zh/pipl.pdf", 2), ("contracts-zh/labor-contract-law.pdf", 1),
                ("contracts-zh/electronic-signature-law.pdf", 2), ("contracts-zh/pipl.pdf", 4),
                ("contracts-zh/labor-contract-law.pdf", 3), ("contracts-zh/civil-code-book3-contracts.pdf", 5)]}


def scanned_copy(src: Path, page: int, dest: Path, dpi: int = 150) -> str:
    """Write an image-only PDF of page `page` (1-based) of `src`; returns the original text."""
    import pymupdf
    with pymupdf.open(src) as doc:
        original = doc[page - 1]
        pix = original.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        out = pymupdf.open()
        blank = out.new_page(width=original.rect.width, height=original.rect.height)
        blank.insert_image(blank.rect, stream=pix.tobytes("jpeg", jpg_quality=80))
        out.save(dest)
        out.close()
        return original.get_text()


def char_accuracy(expected: str, got: str) -> float:
    """1 − Levenshtein(expected, got) / len(expected), whitespace removed."""
    a, b = "".join(expected.split()), "".join(got.split())
    if not a:
        return 1.0 if not b else 0.0
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return max(0.0, 1 - previous[-1] / len(a))


TESSERACT_LANG = {"en": "eng", "zh": "chi_sim"}


def scanned_document(pages: list[tuple[str, int]], dest: Path) -> list[str]:
    """One image-only PDF of those pages; returns their original texts."""
    import pymupdf
    texts, out = [], pymupdf.open()
    for n, (rel, number) in enumerate(pages):
        one = dest.with_name(f"{dest.stem}-{n}.pdf")
        texts.append(scanned_copy(common.CORPUS / rel, number, one))
        with pymupdf.open(one) as src:
            out.insert_pdf(src)
    out.save(dest)
    return texts


def bare_tesseract(scan: Path, lang: str, env: dict) -> float:
    """Seconds for the Tesseract command alone on the renders the app makes of each page."""
    import os
    import subprocess

    import pymupdf

    from app.core.documents import ocr
    with pymupdf.open(scan) as doc:
        renders = [ocr.render(page).png for page in doc]
    start = time.perf_counter()
    for png in renders:
        subprocess.run(["tesseract", "stdin", "stdout", "-l", lang], input=png, capture_output=True,
                       check=True, env={**os.environ, **env})
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=3, help="pages per language")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    from app.core.documents.ingest import ingest
    from app.core.documents.pdf import read_file
    results = {}
    with common.temp_home() as home:
        for lang, pages in PAGES.items():
            scan = Path(home) / f"scan-{lang}.pdf"
            originals = scanned_document(pages[:args.pages], scan)
            ours, bare, bare1, accs = [], [], [], []
            for r in range(args.rounds):
                start = time.perf_counter()
                result = ingest(read_file(scan))
                ours.append(time.perf_counter() - start)
                accs = [char_accuracy(o, p.text) for o, p in zip(originals, result.pages)]
                bare.append(bare_tesseract(scan, TESSERACT_LANG[lang], {}))
                bare1.append(bare_tesseract(scan, TESSERACT_LANG[lang], {"OMP_THREAD_LIMIT": "1"}))
            n = len(originals)
            row = {"pages": n, "app_pages_per_s": round(n / common.median(ours), 3),
                   "bare_pages_per_s": round(n / common.median(bare), 3),
                   "bare_1_thread_pages_per_s": round(n / common.median(bare1), 3),
                   "mean_accuracy": round(sum(accs) / len(accs), 4)}
            row["ratio"] = round(row["app_pages_per_s"] / row["bare_pages_per_s"], 3)
            row["ratio_1_thread"] = round(row["app_pages_per_s"] / row["bare_1_thread_pages_per_s"], 3)
            results[lang] = row
            print(f"{lang}: {n} pages | app {row['app_pages_per_s']:.3f} pages/s | bare tesseract "
                  f"{row['bare_pages_per_s']:.3f} (default threads) = {row['ratio']:.2f}× "
                  f"{common.verdict(row['ratio'] >= 0.9)} | bare 1 thread {row['bare_1_thread_pages_per_s']:.3f} "
                  f"= {row['ratio_1_thread']:.2f}× {common.verdict(row['ratio_1_thread'] >= 0.9)} | "
                  f"accuracy {row['mean_accuracy']:.3f}", flush=True)
    common.write_json("ocr", {"machine": common.machine(), "load": common.load_average(), **results})


if __name__ == "__main__":
    main()
