"""Pages → chunks that follow the document's clauses.

A clause is a chunk; long clauses are split (at sub-items where possible) with a
little overlap; tiny ones (a bare chapter heading) are merged into the next.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import repeat

from app.core.documents.structure import Heading, heading_of, maybe_heading, short_title
from app.core.documents.types import Chunk
from app.core.textnorm import IDEOGRAPH_CLASS

MIN_SIZE = 300      # below this a unit is merged with its neighbour
MAX_SIZE = 1500     # above this a unit is split
OVERLAP = 200       # carried from one split piece into the next
WRAP = MAX_SIZE - OVERLAP - 2   # a longer line is cut: one piece plus the overlap fit a chunk
_RANK = {"编": 0, "分编": 1, "章": 2, "节": 3, "、": 2}


_IDEOGRAPHS = re.compile(f"[{IDEOGRAPH_CLASS}]+")   # runs: fewer matches than one per character


def size(text: str) -> int:
    """Length in 'Latin characters': one Chinese character carries about a word."""
    return len(text) if text.isascii() else len(text) + 2 * sum(map(len, _IDEOGRAPHS.findall(text)))


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


def make_chunks(body: list[list[str]]) -> list[Piece]:
    """`body[i]` = lines of page i+1 with running headers/footers removed."""
    body = [_wrapped(lines) for lines in body]
    units = _merge_small(_units(body))
    pieces: list[Piece] = []
    for unit in units:
        for lines in _split(unit):
            pieces.append(_piece(len(pieces), unit, lines))
    return pieces


def _wrapped(lines: list[str]) -> list[str]:
    """Lines longer than a chunk cut into pieces that fit one, at a space where there is one:
    _split cuts between lines only, and one 50 MB line without a sentence break was stored as
    one 52 MB chunk (5 GB of memory to index it)."""
    if all(len(line) <= WRAP // 3 or size(line) <= WRAP for line in lines):
        return lines
    out: list[str] = []
    for line in lines:
        while size(line) > WRAP:
            # a character counts at most 3 (an ideograph): this many always fit
            cut = WRAP if line[:WRAP].isascii() else WRAP // 3
            space = line.rfind(" ", cut // 2, cut + 1)
            cut = space if space > 0 else cut
            out.append(line[:cut])
            line = line[cut:].lstrip(" ")
        out.append(line)
    return out


def _units(body: list[list[str]]) -> list[_Unit]:
    units, stack = [_Unit()], []            # stack: (rank, title) of enclosing headings
    context = ""                            # their titles, joined
    for page_no, lines in enumerate(body, start=1):
        sizes = [len(line) + 1 if line.isascii() else size(line) + 1 for line in lines]
        start = 0                           # lines[start:i] still go to units[-1]
        # Only lines that may start a heading are looked at; the rest move in slices.
        for i in [i for i, line in enumerate(lines) if maybe_heading(line)]:
            h = heading_of(lines[i])
            if h and h.level <= 2:
                _extend(units[-1], page_no, lines, sizes, start, i)
                if h.level == 1:
                    rank = _RANK.get(h.key[0], 2)
                    stack = [s for s in stack if s[0] < rank] + [(rank, h.title)]
                    context = " ".join(t for _, t in stack if t)
                units.append(_Unit(heads=[h], context=context))
                start = i
        _extend(units[-1], page_no, lines, sizes, start, len(lines))
    return [u for u in units if u.lines]


def _extend(unit: _Unit, page_no: int, lines: list[str], sizes: list[int], a: int, b: int) -> None:
    """Append lines[a:b] of page `page_no` to `unit`."""
    if a >= b:
        return
    second = a + 1 - len(unit.lines)        # index in `lines` of the unit's second line
    if unit.heads and a <= second < b and not unit.heads[-1].title:
        # "18.4." alone on its line: the title starts the next line.
        unit.heads[-1] = _with_title(unit.heads[-1], lines[second])
    unit.lines.extend(zip(repeat(page_no), lines[a:b]))
    unit.sizes.extend(sizes[a:b])


def _with_title(head: Heading, line: str) -> Heading:
    titled = head.level < 3 and not head.label.endswith("条")
    return Heading(head.label, head.level, short_title(line.strip()) if titled else "", head.key)


def _merge_small(units: list[_Unit]) -> list[_Unit]:
    merged: list[_Unit] = []
    carry: _Unit | None = None
    for unit in units:
        if carry:   # the units are _units()' own: grow the carried one in place
            carry.heads += unit.heads
            carry.context = unit.context or carry.context
            carry.lines += unit.lines
            carry.sizes += unit.sizes
            unit, carry = carry, None
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
    lines, sizes = unit.lines, unit.sizes
    out, start, cur_size = [], 0, 0         # the current window is lines[start:i]
    for i, s in enumerate(sizes):
        sub = (cur_size > MAX_SIZE // 2 and maybe_heading(lines[i][1])
               and (h := heading_of(lines[i][1])) is not None and h.level == 3)
        if i > start and (cur_size + s > MAX_SIZE or sub):
            out.append(lines[start:i])
            # The next window opens with the last lines of this one, up to OVERLAP.
            j, cur_size = i, 0
            while j > start and cur_size + sizes[j - 1] <= OVERLAP:
                j -= 1
                cur_size += sizes[j]
            start = j
        cur_size += s
    out.append(lines[start:])
    return out


def _piece(ordinal: int, unit: _Unit, lines: list[tuple[int, str]]) -> Piece:
    first, end = lines[0][0], lines[-1][0]
    if first == end:                        # most chunks lie on one page
        spans = [(first, 0)]
    else:
        spans, offset, last = [], 0, 0
        for page, line in lines:
            if page != last:
                spans.append((page, offset))
                last = page
            offset += len(line) + 1
    main = next((h for h in unit.heads if h.level == 2), unit.heads[0] if unit.heads else None)
    titles = [h.title for h in unit.heads if h.title]
    chunk = Chunk(ordinal=ordinal, page_start=first, page_end=end,
                  section=main.label if main else "", text="\n".join([line for _, line in lines]))
    heading = " ".join(dict.fromkeys([unit.context] + titles)).strip()
    return Piece(chunk, tuple(dict.fromkeys(h.key for h in unit.heads)), heading, tuple(spans))
