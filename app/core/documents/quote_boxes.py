"""Where a quote sits on its page: the boxes of its own characters, merged per line.

Word or phrase search leaves gaps between the words of a justified line, and a Chinese quote
(no spaces to split on) was searched in 8-character pieces that miss across line ends and can
light the same words in another clause. Matching the quote against the page's characters, with
whitespace ignored, covers exactly the quote: one box per line it spans.
"""
from __future__ import annotations

import unicodedata

_FOLD = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ",
         "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-", "\u00ad": ""}
_HYPHENS = "-\u2010\u2011\u00ad"


def _fold(ch: str) -> str:
    """One printed character as compared text: ligatures opened (ﬁ → fi), quotes straightened."""
    if ch in _FOLD:
        return _FOLD[ch]
    return unicodedata.normalize("NFKC", ch).casefold()


def _page_chars(page) -> list[tuple[str, tuple, int]]:
    """(folded text, bbox, line number) for each non-blank character, in reading order."""
    out, line_no = [], 0
    for block in page.get_text("rawdict")["blocks"]:
        for line in block.get("lines", ()):
            line_no += 1
            chars = [ch for span in line["spans"] for ch in span["chars"]]
            for i, ch in enumerate(chars):
                text = _fold(ch["c"])
                if not text.strip():
                    continue
                last = all(not c["c"].strip() for c in chars[i + 1:])
                # a hyphen ending a line may be a word broken in two: mark it so both spellings match
                out.append((text, tuple(ch["bbox"]), line_no if not (last and ch["c"] in _HYPHENS)
                            else -line_no))
    return out


def _find(chars: list[tuple[str, tuple, int]], target: str, keep_line_hyphens: bool
          ) -> list[tuple[tuple, int]] | None:
    """The boxes of the characters that spell target, or None."""
    stream, owner = [], []
    for text, bbox, line in chars:
        if line < 0 and not keep_line_hyphens:
            continue
        for c in text:
            stream.append(c)
            owner.append((bbox, abs(line)))
    at = "".join(stream).find(target)
    if at < 0:
        return None
    return owner[at:at + len(target)]


def _merge_by_line(hits: list[tuple[tuple, int]]) -> list[tuple[float, float, float, float]]:
    lines: dict[int, list[float]] = {}
    for (x0, y0, x1, y1), line in hits:
        box = lines.setdefault(line, [x0, y0, x1, y1])
        box[0], box[1] = min(box[0], x0), min(box[1], y0)
        box[2], box[3] = max(box[2], x1), max(box[3], y1)
    return [tuple(b) for _, b in sorted(lines.items())]


def quote_boxes(page, quote: str) -> list[tuple[float, float, float, float]]:
    """Boxes (PDF points) covering exactly the quote's characters, one per line; [] if absent."""
    target = "".join(c for ch in quote for c in _fold(ch) if not c.isspace())
    if len(target) < 2:
        return []
    chars = _page_chars(page)
    hits = _find(chars, target, True) or _find(chars, target, False)
    return _merge_by_line(hits) if hits else []
