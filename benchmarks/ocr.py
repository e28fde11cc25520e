"""OCR speed and character accuracy on scanned renders of corpus pages (English, Chinese).

    .venv/bin/python benchmarks/ocr.py [--pages 3]

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
                ("contracts-en/bonterms-psa-v1.2.pdf", 2)],
         "zh": [("contracts-zh/pipl.pdf", 2), ("contracts-zh/labor-contract-law.pdf", 1),
                ("contracts-zh/electronic-signature-law.pdf", 2)]}


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=3, help="pages per language")
    args = ap.parse_args()
    from app.core.documents.ingest import ingest
    from app.core.documents.pdf import read_file
    results = {}
    with common.temp_home() as home:
        for lang, pages in PAGES.items():
            rows = []
            for rel, number in pages[:args.pages]:
                scan = Path(home) / f"{Path(rel).stem}-p{number}.pdf"
                original = scanned_copy(common.CORPUS / rel, number, scan)
                start = time.perf_counter()
                result = ingest(read_file(scan))
                secs = time.perf_counter() - start
                acc = char_accuracy(original, result.pages[0].text)
                rows.append({"page": f"{rel} p. {number}", "seconds": round(secs, 2),
                             "accuracy": round(acc, 4)})
                print(f"{lang} {rel} p. {number}: {secs:.1f} s, accuracy {acc:.3f}", flush=True)
            total = sum(r["seconds"] for r in rows)
            results[lang] = {"pages": rows, "pages_per_s": round(len(rows) / total, 3),
                             "mean_accuracy": round(sum(r["accuracy"] for r in rows) / len(rows), 4)}
            print(f"{lang}: {results[lang]['pages_per_s']} pages/s, mean accuracy "
                  f"{results[lang]['mean_accuracy']}", flush=True)
    common.write_json("ocr", {"machine": common.machine(), "load": common.load_average(), **results})


if __name__ == "__main__":
    main()
