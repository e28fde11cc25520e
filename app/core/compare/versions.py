"""What changed between two versions of a contract: their clauses aligned by number and
heading, and by their words where the numbers moved (11.2 → 12.2), each pair classed
unchanged / changed / added / removed / moved; for a changed pair the words deleted from the
old version and inserted in the new one, each with its page and PyMuPDF's rectangles; and
the change list, material changes first. From the documents' text and structure alone."""
from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.compare.materiality import kinds_of
from app.core.compare.version_text import Clause, Rect, Word, joined, norm_word, open_version
from app.core.textnorm import drop_cjk_spaces

SAME_WORDS = 0.5      # word-pair overlap (Dice) above which two clauses are one clause renumbered
TITLE_WORDS = 0.15    # … enough where their headings agree too (a heading found once in each)
CONTEXT = 4           # unchanged words shown around a change
STATUSES = ("changed", "added", "removed", "moved", "unchanged")


@dataclass(frozen=True)
class Phrase:
    """A run of words deleted (on the old version) or inserted (on the new), on one page."""
    text: str
    page: int
    rects: tuple[Rect, ...]

    def to_dict(self) -> dict:
        return {"text": self.text, "page": self.page, "rects": [[round(v, 2) for v in r] for r in self.rects]}


@dataclass(frozen=True)
class Edit:
    """One change in its context, as a redline reads: "licensed [-to-] {+by+} Provider {+to
    Customer+} under", with the page of its first changed word in each version."""
    text: str
    old_page: int
    new_page: int

    def to_dict(self) -> dict:
        return {"text": self.text, "old_page": self.old_page, "new_page": self.new_page}


@dataclass
class ClausePair:
    status: str                      # one of STATUSES
    old: Clause | None
    new: Clause | None
    deleted: list[Phrase] = field(default_factory=list)
    inserted: list[Phrase] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)     # material kinds (materiality.KINDS)
    edits: list[Edit] = field(default_factory=list)    # each change in its context, for people

    @property
    def renumbered(self) -> bool:
        return bool(self.old and self.new and self.old.key != self.new.key)

    @property
    def material(self) -> bool:
        return bool(self.kinds) or self.status in ("added", "removed")

    def name(self) -> str:
        """ "12.2 Consequential Damages Waiver", or "11.2 → 12.2 Fees" when renumbered."""
        if self.renumbered:
            return f"{self.old.label or '(opening)'} → {self.new.name()}"
        return (self.new or self.old).name()

    def to_dict(self) -> dict:
        def side(c: Clause | None) -> dict | None:
            return None if c is None else {"clause": c.label, "title": c.title, "page": c.page,
                                           "pages": c.pages, "text": c.text}
        return {"status": self.status, "name": self.name(), "renumbered": self.renumbered,
                "material": self.material, "kinds": self.kinds, "old": side(self.old), "new": side(self.new),
                "edits": [e.to_dict() for e in self.edits],
                "deleted": [p.to_dict() for p in self.deleted], "inserted": [p.to_dict() for p in self.inserted]}


@dataclass
class Redline:
    old_path: str
    new_path: str
    pairs: list[ClausePair]          # in the new version's order, removed clauses where they stood
    ms: float

    def changes(self) -> list[ClausePair]:
        """Every pair that is not unchanged, material ones first, then in reading order."""
        moved = [p for p in self.pairs if p.status != "unchanged"]
        return sorted(moved, key=lambda p: (not p.material, -len(p.kinds)))

    def counts(self) -> dict[str, int]:
        return {s: sum(p.status == s for p in self.pairs) for s in STATUSES}

    def to_dict(self) -> dict:
        return {"old": self.old_path, "new": self.new_path, "ms": round(self.ms, 1), "counts": self.counts(),
                "changes": [p.to_dict() for p in self.changes()]}


def diff_files(old_path: str | Path, new_path: str | Path,
               passwords: tuple[str | None, str | None] = (None, None)) -> Redline:
    """The redline of two PDF files (the old version first), each with its password if any."""
    started = time.perf_counter()
    sides = [open_version(path, password) for path, password in zip((old_path, new_path), passwords)]
    return diff_versions(sides[0], sides[1], str(old_path), str(new_path), started)


def diff_versions(old: list[Clause], new: list[Clause], old_path: str = "", new_path: str = "",
                  started: float | None = None) -> Redline:
    started = time.perf_counter() if started is None else started
    match = align(old, new)
    pairs: list[ClausePair] = []
    matched_old = set(match.values())
    pending_removed = [i for i in range(len(old)) if i not in matched_old]
    latest = -1             # the furthest old clause paired so far, in the new version's order
    for j, clause in enumerate(new):
        i = match.get(j)
        if i is not None:
            # the old version's clauses no longer there that stood before this one
            while pending_removed and pending_removed[0] < i:
                pairs.append(_removed(old[pending_removed.pop(0)]))
            # out of order: a clause before it in the new version came after it in the old one
            pairs.append(compare(old[i], clause, out_of_order=latest > i))
            latest = max(latest, i)
        else:
            pairs.append(ClausePair("added", None, clause, inserted=_phrases(clause.words),
                                    kinds=kinds_of([], clause.norms)))
    pairs += [_removed(old[i]) for i in pending_removed]
    return Redline(old_path, new_path, pairs, (time.perf_counter() - started) * 1000)


def _removed(clause: Clause) -> ClausePair:
    return ClausePair("removed", clause, None, deleted=_phrases(clause.words), kinds=kinds_of(clause.norms, []))


def align(old: list[Clause], new: list[Clause]) -> dict[int, int]:
    """new index → old index: first a clause whose words are all the same and found once in each
    version (renumbered or not); then the same number with the same heading or much the same
    words; then, among what is left, the same heading; then the most word pairs in common."""
    match: dict[int, int] = {}
    texts = [_unique_texts(old), _unique_texts(new)]
    for text, j in texts[1].items():
        if text in texts[0]:
            match[j] = texts[0][text]
    taken = set(match.values())
    by_key = {c.key: i for i, c in enumerate(old) if c.key or i == 0}
    sets = [_pairs(c) for c in old], [_pairs(c) for c in new]
    for j, clause in enumerate(new):
        i = by_key.get(clause.key)
        # the openings (title, parties, recitals: before the first number) always pair
        # under one number, one version mostly held in the other (a clause grown or cut) will do
        if j not in match and i is not None and i not in taken and (
                not clause.key or _same_title(old[i], clause) or _held(sets[0][i], sets[1][j]) >= SAME_WORDS):
            match[j] = i
            taken.add(i)
    titles: dict[str, list[int]] = {}
    for i, c in enumerate(old):
        if i not in taken and c.title:
            titles.setdefault(_title_key(c), []).append(i)
    for j, clause in enumerate(new):
        if j in match or not clause.title:
            continue
        candidates = [i for i in titles.get(_title_key(clause), []) if i not in taken]
        if len(candidates) == 1 and _dice(sets[0][candidates[0]], sets[1][j]) >= TITLE_WORDS:
            match[j] = candidates[0]
            taken.add(candidates[0])
    scored = sorted(((_dice(sets[0][i], sets[1][j]), j, i)
                     for j in range(len(new)) if j not in match
                     for i in range(len(old)) if i not in taken), reverse=True)
    for score, j, i in scored:
        if score < SAME_WORDS:
            break
        if j not in match and i not in taken:
            match[j] = i
            taken.add(i)
    return match


def _unique_texts(clauses: list[Clause]) -> dict[tuple, int]:
    """Each clause's words → its index, for the texts found in one clause only."""
    seen: dict[tuple, int] = {}
    twice = set()
    for i, c in enumerate(clauses):
        text = tuple(c.norms)
        if text in seen:
            twice.add(text)
        seen[text] = i
    return {t: i for t, i in seen.items() if t not in twice and t}


def _pairs(clause: Clause) -> set:
    """The clause's adjacent word pairs (its words where it has fewer than two): what two
    versions of one clause share and two clauses of one document do not (Chinese characters
    alone, each a word here, are common to every article)."""
    norms = clause.norms
    return set(zip(norms, norms[1:])) if len(norms) > 1 else set(norms)


def _same_title(a: Clause, b: Clause) -> bool:
    return bool(a.title) and _title_key(a) == _title_key(b)


def _title_key(c: Clause) -> str:
    return norm_word(c.title).casefold()


def _held(a: set, b: set) -> float:
    """How much of the smaller set the larger holds (1.0: one is inside the other)."""
    return len(a & b) / min(len(a), len(b)) if a and b else float(a == b)


def _dice(a: set, b: set) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 1.0


def compare(old: Clause, new: Clause, out_of_order: bool = False) -> ClausePair:
    """One aligned pair: its words compared; deleted and inserted runs with their rectangles."""
    a, b = old.norms, new.norms
    if a == b:
        status = "moved" if (old.key != new.key or out_of_order) else "unchanged"
        return ClausePair(status, old, new)
    deleted, inserted, del_words, ins_words = [], [], [], []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("delete", "replace"):
            deleted += _phrases(old.words[i1:i2])
            del_words += a[i1:i2]
        if op in ("insert", "replace"):
            inserted += _phrases(new.words[j1:j2])
            ins_words += b[j1:j2]
    edits = [_edit(group, old.words, new.words) for group in matcher.get_grouped_opcodes(CONTEXT)]
    return ClausePair("changed", old, new, deleted, inserted, kinds_of(del_words, ins_words), edits)


def _edit(group: list[tuple], old: list[Word], new: list[Word]) -> Edit:
    """One group of changes with up to CONTEXT unchanged words around and between them."""
    parts = []
    for op, i1, i2, j1, j2 in group:
        if op == "equal":
            parts.append(joined(new[j1:j2]))
            continue
        if i2 > i1:
            parts.append(f"[-{joined(old[i1:i2])}-]")
        if j2 > j1:
            parts.append(f"{{+{joined(new[j1:j2])}+}}")
    first = next(g for g in group if g[0] != "equal")
    old_page = old[min(first[1], len(old) - 1)].page if old else 0
    new_page = new[min(first[3], len(new) - 1)].page if new else 0
    return Edit(drop_cjk_spaces(" ".join(parts)), old_page, new_page)


def _phrases(words: list[Word]) -> list[Phrase]:
    """A run of words as phrases, one per page; a line's rectangles merged into one."""
    out: list[Phrase] = []
    run: list[Word] = []
    for w in words:
        if run and w.page != run[-1].page:
            out.append(_phrase(run))
            run = []
        run.append(w)
    if run:
        out.append(_phrase(run))
    return out


def _phrase(words: list[Word]) -> Phrase:
    rects: list[list[float]] = []
    for w in words:
        for r in w.rects:
            last = rects[-1] if rects else None
            # the same line: the next word starts after this one, the two overlap in height
            if last and r[0] >= last[0] and abs(r[1] - last[1]) < 0.5 * (r[3] - r[1]):
                last[2], last[1], last[3] = max(last[2], r[2]), min(last[1], r[1]), max(last[3], r[3])
            else:
                rects.append(list(r))
    return Phrase(joined(words), words[0].page, tuple(tuple(r) for r in rects))
