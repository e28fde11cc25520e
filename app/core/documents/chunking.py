"""Pages → chunks that follow the document's clauses.

A clause is a chunk; long clauses are split (at sub-items where possible) with a
little overlap; tiny ones (a bare chapter heading) are merged into the next.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.core.documents.structure import Heading, heading_of, short_title
from app.core.documents.types import Chunk
from app.core.textnorm import IDEOGRAPH_CLASS

MIN_SIZE = 300      # below this a unit is merged with its neighbour
MAX_SIZE = 1500     # above this a unit is split
OVERLAP = 200       # carried from one split piece into the next
_RANK = {"编": 0, "分编": 1, "章": 2, "节": 3, "、": 2}


_IDEOGRAPH = re.compile(f"[{IDEOGRAPH_CLASS}]")


def size(text: str) -> int:
    """Length in 'Latin characters': one Chinese character carries about a word."""
    return len(text) if text.isascii() else len(text) + 2 * len(_IDEOGRAPH.findall(text))


@dataclass
class Piece:
    """A chunk plus what the index needs to find it."""
    chunk: Chunk
    keys: tuple[str, ...]                # canonical section keys ("5.2", "586")
    heading: str                         # enclosing headings and clause titles
    spans: tuple[tuple[int, int], ...]   # (page, offset in chunk.text where it starts)


@dataclass
class _Unit:
    heads: list[Heading] = field(default_factory=list)
    context: str = ""
    lines: list[tuple[int, str]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)   # size(line) + 1, computed once

    def size(self) -> int:
        return sum(self.sizes)

    def add(self, page: int, line: str) -> None:
        self.lines.append((page, line))
        self.sizes.append(size(line) + 1)


def make_chunks(body: list[list[str]]) -> list[Piece]:
    """`body[i]` = lines of page i+1 with running headers/footers removed."""
    units = _merge_small(_units(body))
    pieces: list[Piece] = []
    for unit in units:
        for lines in _split(unit):
            pieces.append(_piece(len(pieces), unit, lines))
    return pieces


def _units(body: list[list[str]]) -> list[_Unit]:
    units, stack = [_Unit()], []            # stack: (rank, title) of enclosing headings
    for page_no, lines in enumerate(body, start=1):
        for line in lines:
            h = heading_of(line)
            unit = units[-1]
            if h and h.level <= 2:
                if h.level == 1:
                    rank = _RANK.get(h.key[0], 2)
                    stack = [s for s in stack if s[0] < rank] + [(rank, h.title)]
                unit = _Unit(heads=[h], context=" ".join(t for _, t in stack if t))
                units.append(unit)
            elif unit.heads and len(unit.lines) == 1 and not unit.heads[-1].title:
                # "18.4." alone on its line: the title starts the next line.
                head = unit.heads[-1]
                unit.heads[-1] = _with_title(head, line)
            unit.add(page_no, line)
    return [u for u in units if u.lines]


def _with_title(head: Heading, line: str) -> Heading:
    titled = head.level < 3 and not head.label.endswith("条")
    return Heading(head.label, head.level, short_title(line.strip()) if titled else "", head.key)


def _merge_small(units: list[_Unit]) -> list[_Unit]:
    merged: list[_Unit] = []
    carry: _Unit | None = None
    for unit in units:
        if carry:
            unit = _Unit(carry.heads + unit.heads, unit.context or carry.context,
                         carry.lines + unit.lines, carry.sizes + unit.sizes)
            carry = None
        if unit.size() < MIN_SIZE:
            carry = unit
        else:
            merged.append(unit)
    if carry:
        if merged:
            last = merged[-1]
            merged[-1] = _Unit(last.heads + carry.heads, last.context, last.lines + carry.lines,
                               last.sizes + carry.sizes)
        else:
            merged.append(carry)
    return merged


def _split(unit: _Unit) -> list[list[tuple[int, str]]]:
    """Greedy windows of ≤ MAX_SIZE; prefer cutting before a sub-item; overlap a little."""
    if unit.size() <= MAX_SIZE:
        return [unit.lines]
    out, cur, cur_size = [], [], 0
    for item, s in zip(unit.lines, unit.sizes):
        sub = cur_size > MAX_SIZE // 2 and (h := heading_of(item[1])) is not None and h.level == 3
        if cur and (cur_size + s > MAX_SIZE or sub):
            out.append(cur)
            cur = _tail(cur)
            cur_size = sum(size(l) + 1 for _, l in cur)
        cur.append(item)
        cur_size += s
    if cur:
        out.append(cur)
    return out


def _tail(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    tail, total = [], 0
    for item in reversed(lines):
        total += size(item[1]) + 1
        if total > OVERLAP:
            break
        tail.insert(0, item)
    return tail


def _piece(ordinal: int, unit: _Unit, lines: list[tuple[int, str]]) -> Piece:
    spans, parts, offset = [], [], 0
    for page, line in lines:
        if not spans or spans[-1][0] != page:
            spans.append((page, offset))
        parts.append(line)
        offset += len(line) + 1
    main = next((h for h in unit.heads if h.level == 2), unit.heads[0] if unit.heads else None)
    titles = [h.title for h in unit.heads if h.title]
    chunk = Chunk(ordinal=ordinal, page_start=lines[0][0], page_end=lines[-1][0],
                  section=main.label if main else "", text="\n".join(parts))
    heading = " ".join(dict.fromkeys([unit.context] + titles)).strip()
    return Piece(chunk, tuple(dict.fromkeys(h.key for h in unit.heads)), heading, tuple(spans))
