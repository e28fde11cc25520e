"""A redline people can keep: the change list as Markdown or a PDF memo, material changes
first, each with the words deleted and inserted and its pages in both versions."""
from __future__ import annotations

import html
import re
import time
from pathlib import Path

from app.core.compare.versions import ClausePair, Redline


def pages_of(pair: ClausePair) -> str:
    """ "old p. 9 → new p. 9" (a clause added or removed has one side)."""
    old = f"old p. {_pages(pair.old.pages)}" if pair.old else "not in the old version"
    new = f"new p. {_pages(pair.new.pages)}" if pair.new else "not in the new version"
    return f"{old} → {new}"


def _pages(pages: list[int]) -> str:
    return f"{pages[0]}" if len(pages) <= 1 else f"{pages[0]}-{pages[-1]}"


def _quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def headline(redline: Redline) -> str:
    c = redline.counts()
    return (f"{Path(redline.old_path).name} → {Path(redline.new_path).name}: {c['changed']} changed, "
            f"{c['added']} added, {c['removed']} removed, {c['moved']} moved, {c['unchanged']} unchanged")


def change_lines(pair: ClausePair) -> tuple[str, list[tuple[str, str]]]:
    """The change's heading and its (kind, words) lines: deleted, inserted, or the clause."""
    mark = f" [material: {', '.join(pair.kinds) or pair.status}]" if pair.material else ""
    head = f"{pair.status}: {pair.name()} ({pages_of(pair)}){mark}"
    if pair.status == "added":
        return head, [("added", _quote(pair.new.text))]
    if pair.status == "removed":
        return head, [("removed", _quote(pair.old.text))]
    if pair.edits:          # each change in its context: "licensed [-to-] {+by+} Provider"
        return head, [(f"old p. {e.old_page}, new p. {e.new_page}", _quote(e.text, 400)) for e in pair.edits]
    return head, ([("deleted", _quote(p.text)) for p in pair.deleted]
                  + [("inserted", _quote(p.text)) for p in pair.inserted])


def to_text(redline: Redline) -> str:
    lines = [f"{headline(redline)}  ({redline.ms / 1000:.2f} s)"]
    for pair in redline.changes():
        head, parts = change_lines(pair)
        lines.append(f"\n{head}")
        lines += [f"  {kind}: \u201c{words}\u201d" for kind, words in parts]
    return "\n".join(lines)


def to_markdown(redline: Redline, when: float | None = None) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() if when is None else when))
    lines = [f"# What changed: {Path(redline.old_path).name} → {Path(redline.new_path).name}", "",
             f"*Pagewise, {stamp} · {headline(redline)}*", ""]
    for n, pair in enumerate(redline.changes(), start=1):
        head, parts = change_lines(pair)
        lines += [f"{n}. **{head}**"]
        lines += [f"   - {kind}: “{_marked(words.replace('*', chr(92) + '*'), '~~', '~~', '**', '**')}”"
                  for kind, words in parts]
    if not redline.changes():
        lines.append("*No changes: every clause reads the same.*")
    return "\n".join(lines) + "\n"


_DELETED = re.compile(r"\[-(.*?)-\]", re.S)
_INSERTED = re.compile(r"\{\+(.*?)\+\}", re.S)
_HTML_MARKS = ("<span style='color:#b03a2e; text-decoration:line-through'>", "</span>",
               "<span style='color:#1e8449; text-decoration:underline'>", "</span>")


def _marked(text: str, del_open: str, del_close: str, ins_open: str, ins_close: str) -> str:
    """An edit's [-deleted-] and {+inserted+} words in the markup of the file written."""
    text = _DELETED.sub(lambda m: f"{del_open}{m.group(1)}{del_close}", text)
    return _INSERTED.sub(lambda m: f"{ins_open}{m.group(1)}{ins_close}", text)


def to_pdf(redline: Redline, dest: Path) -> Path:
    from app.core.answer.export_formats import _write_pdf
    esc = html.escape
    colour = {"deleted": "#b03a2e", "removed": "#b03a2e", "inserted": "#1e8449", "added": "#1e8449"}
    parts = [f"<h1>What changed: {esc(Path(redline.old_path).name)} → {esc(Path(redline.new_path).name)}</h1>",
             f"<p style='color:#666'><i>{esc(headline(redline))}</i></p><ol>"]
    for pair in redline.changes():
        head, lines = change_lines(pair)
        parts.append(f"<li><b>{esc(head)}</b>")
        parts += [f"<br/><span style='color:{colour.get(k, '#333')}'>{k}: “{_marked(esc(w), *_HTML_MARKS)}”</span>"
                  for k, w in lines]
        parts.append("</li>")
    parts.append("</ol>")
    return _write_pdf(parts, dest, f"What changed: {Path(redline.new_path).name}", headline(redline))
