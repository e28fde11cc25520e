"""Successive versions of a real contract as PDFs, made at test time from their markdown sources
(tests/fixtures/versions/, Bonterms PSA 1.0, 1.1 and 1.2, CC BY 4.0): rendered with PyMuPDF's
Story as the corpus was (wording unchanged, markup dropped, a running header and a "Page N of M"
footer on every page), so the redline is tested on real text, real line wraps and real pages.

Also the gold change list of a pair from the sources themselves: each numbered clause's text with
its markup dropped, compared clause number by clause number (what `git diff --word-diff` of the
two files shows, less the changes of bold and italics that no reader of the PDF can see)."""
from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path

import pymupdf

from tests.support import ROOT

SOURCES = ROOT / "tests" / "fixtures" / "versions"
PAGE = pymupdf.paper_rect("letter")
BODY = PAGE + (60, 64, -60, -56)
_CSS = "* {font-family: sans-serif; font-size: 10.5px;} h1, h2 {font-size: 15px;} p {margin-bottom: 6px;}"
_CLAUSE = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")


def source(name: str) -> str:
    """The version's markdown, list numbering made explicit ("    2. Support" under "1." →
    "1.2 Support") as the corpus renderer did, so the PDF prints each clause's number."""
    return explicit_numbers((SOURCES / f"{name}.md").read_text(encoding="utf-8"))


_OWNER = {"bonterms": "CC BY 4.0 Bonterms, Inc.", "common": "CC BY 4.0 Common Paper",
          "charity": "official text, PRC Copyright Law Art. 5"}
_SPAN = re.compile(r"</?span[^>]*>")
_TOP = re.compile(r"^(\d+)\.\s+(?:##\s*)?(.*)")
_SUB = re.compile(r"^ {4}(\d+)\.\s+(.*)")
_ITEM = re.compile(r"^ {8}([a-z])\.\s+(.*)")


def explicit_numbers(markdown: str) -> str:
    out, top = [], 0
    for line in _SPAN.sub("", markdown).splitlines():
        if m := _TOP.match(line):
            top = int(m.group(1))
            line = f"{top}. {m.group(2)}"
        elif m := _SUB.match(line):
            line = f"{top}.{m.group(1)} {m.group(2)}"
        elif m := _ITEM.match(line):
            line = f"({m.group(1)}) {m.group(2)}"
        out.append(line)
    return "\n".join(out)


def plain(line: str) -> str:
    """A markdown line as the reader sees it: no bold/italic marks, tabs as spaces."""
    return " ".join(line.replace("*", "").replace("\t", " ").split())


def to_html(markdown: str) -> str:
    parts = []
    for line in markdown.splitlines():
        text = plain(line)
        if not text or text.startswith("<!--"):
            continue
        if line.startswith("#"):
            parts.append(f"<h2>{html.escape(text.lstrip('# '))}</h2>")
        else:
            parts.append(f"<p>{html.escape(text)}</p>")
    return "".join(parts)


def render(markdown: str, dest: Path, header: str, body: pymupdf.Rect = BODY) -> Path:
    """The markdown as a PDF: Story pages, then each page's running header and footer."""
    story = pymupdf.Story(html=to_html(markdown), user_css=_CSS)
    writer = pymupdf.DocumentWriter(str(dest))
    more = True
    while more:
        device = writer.begin_page(PAGE)
        more, _ = story.place(body)
        story.draw(device)
        writer.end_page()
    writer.close()
    with pymupdf.open(dest) as doc:
        total = doc.page_count
        for page in doc:
            page.insert_text((60, 40), header, fontsize=8, fontname="helv")
            page.insert_text((PAGE.width / 2 - 30, PAGE.height - 30), f"Page {page.number + 1} of {total}",
                             fontsize=8, fontname="helv")
        doc.saveIncr()
    return dest


def render_version(name: str, folder: Path, body: pymupdf.Rect = BODY) -> Path:
    """tests/fixtures/versions/<name>.md → folder/<name>.pdf (made once per folder)."""
    dest = folder / f"{name}.pdf"
    if not dest.exists():
        render(source(name), dest, f"{name} · rendered from its markdown source · {_OWNER[name.split('-')[0]]}", body)
    return dest


def clauses(markdown: str) -> dict[str, str]:
    """Numbered clause → its text as read (unnumbered paragraphs belong to the clause above;
    what comes before clause 1, the title and any note, is clause "0")."""
    out: dict[str, list[str]] = {"0": []}
    key = "0"
    for line in markdown.splitlines():
        text = plain(line).lstrip("# ")
        m = _CLAUSE.match(text)
        if m:
            key = m.group(1)
            out[key] = [text[m.end():]]
        elif text:
            out[key].append(text)
    return {k: " ".join(v) for k, v in out.items()}


def gold_changes(old: str, new: str) -> dict[str, list[str]]:
    """The sources' own change list: clause numbers changed, added and removed."""
    a, b = clauses(source(old)), clauses(source(new))
    return {"changed": [k for k in a if k in b and a[k] != b[k]],
            "added": [k for k in b if k not in a], "removed": [k for k in a if k not in b]}


def renumbered(old: str, new: str) -> dict[str, str]:
    """Clauses whose heading ("Support.") names one clause in each version under two numbers:
    old number → new number (the sources' own record of a renumbering)."""
    def titled(name: str) -> dict[str, str]:
        by_title: dict[str, list[str]] = {}
        for key, text in clauses(source(name)).items():
            title = text.split(".")[0].strip()
            if "." in key and 0 < len(title) <= 60 and text.startswith(title + "."):
                by_title.setdefault(title, []).append(key)
        return {t: keys[0] for t, keys in by_title.items() if len(keys) == 1}
    a, b = titled(old), titled(new)
    return {a[t]: b[t] for t in a if t in b and a[t] != b[t]}


def words_in(pdf: Path | str, page: int, rects) -> str:
    """The page's words whose middle lies in one of the rectangles: what a highlight lights up."""
    with pymupdf.open(pdf) as doc:
        words = doc[page - 1].get_text("words")
    return " ".join(w[4] for r in rects for w in words
                    if pymupdf.Rect(r).contains(pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2)))


_ARTICLE = re.compile(r"^第([零一二三四五六七八九十百]+)条\s*")


def articles(name: str) -> dict[str, str]:
    """A Chinese law's articles: 第十七条 → its text, paragraphs and items joined, without spaces
    and with full-width punctuation as NFKC reads it ("：" and ":" are one character to a reader)."""
    out: dict[str, str] = {}
    key = ""
    for line in source(name).splitlines():
        text = plain(line)
        if m := _ARTICLE.match(text):
            key, text = m.group(1), text[m.end():]
            out[key] = ""
        elif text.startswith("#") or text.startswith("<!--"):
            key = ""                               # a chapter heading ends the article
            continue
        if key:
            out[key] += "".join(unicodedata.normalize("NFKC", text).split())
    return out


def touched_articles(old: str, new: str) -> tuple[set[str], set[str], dict[str, str]]:
    """The sources' own record of a revision of a law, from the texts alone: the old articles
    whose words stand nowhere in the new version (changed or repealed), the new ones whose words
    stand nowhere in the old (changed or added), and the articles kept word for word under a new
    number (old → new), each by its Chinese numeral."""
    a, b = articles(old), articles(new)
    old_texts, new_texts = set(a.values()), set(b.values())
    by_text = {t: k for k, t in b.items()}
    moved = {k: by_text[t] for k, t in a.items() if t in new_texts and by_text[t] != k
             and list(b.values()).count(t) == 1}
    return ({k for k, t in a.items() if t not in new_texts}, {k for k, t in b.items() if t not in old_texts}, moved)
