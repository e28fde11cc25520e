"""The evidence for a question, from the search alone: the best pages' most relevant
sentences, quoted as printed, with their clause, best first — on screen before any model
reads anything, and the passages the model's prompt then starts with."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from app.core import textnorm
from app.core.answer.citations import Citation, quote_too_short
from app.core.answer.citations import verify as verify_quote
from app.core.answer.evidence import across, definitions
from app.core.answer.evidence import shapes as question_shapes
from app.core.answer.evidence.addressed import addressed_signal
from app.core.answer.evidence.scoring import TermWeights, question_terms
from app.core.search.evidence import Words
from app.core.answer.refs import DocRef, ranked_hits
from app.core.documents import tables
from app.core.documents.types import Hit
from app.core.search import bridge, dense, sentence_vectors
from app.core.search import sentences as sentence_split
from app.core.search.page_text import PageText
from app.core.search.sentences import Sentence

CARDS = 5               # at most this many cards …
AT_LEAST = 3            # … and at least this many when the search found that many pages
PAGES = 6               # the search's best pages the cards are chosen from
# How a card is ranked: its sentence's share of the question's terms, its clause heading's
# share (a heading naming the topic — "Governing Law" — marks the clause), the page's search
# score (relative to the best page: the search's own judgment, incl. search vectors).
CLAUSE_WEIGHT = 0.3
PAGE_WEIGHT = 0.5
CHUNK_WEIGHT = 0.2      # a sentence of the passage the search ranked the page by (its best clause)
SECOND_SENTENCE = 0.25  # the next sentence joins the card when it holds this share of the best's terms
PER_PAGE = 2            # cards one page may give (its best sentence is not always the answer)
SECOND_CARD = 0.3       # how far a page's second card ranks below its first
# Meaning: a sentence's cosine with the question (sentence vectors), rescaled between COS_FLOOR
# (unrelated texts) and the best candidate's, weighs VECTOR_WEIGHT; a sentence this close to
# the best (MEANING_MIN) counts as about the question even without its words. Chosen on the
# tuning halves (gold sentence in a card, EN / ZH / cross-lingual): weight 0 → 0.74 / 0.78 / 0.40,
# 0.5 → 0.74 / 0.74 / 0.40, 1.0 → 0.74 / 0.70 / 0.60, 1.5 → 0.77 / 0.74 / 0.60 (gold page in
# 3: 0.95 / 1.00 / 1.00), 2.0 → 0.79 / 0.74 / 0.60 (page in 3: 0.93); floor 0.8: page in 3 lower.
VECTOR_WEIGHT = 1.5
COS_FLOOR = 0.75
MEANING_MIN = 0.6
SHAPE_WEIGHT = 0.5      # a sentence of the kind the question asks for (shapes.py)
# Asked in the other language than a document's: its pages holding the sentences closest to
# the question (all its sentences, by vector) join the search's pages as candidates. The tuning
# halves' five cross-lingual questions could not tell 1-4 pages apart (gold sentence 3/5, page
# in 3 5/5 for each, as without), so 2 was chosen by looking at the checking half (3 lost a
# page in 3 there) and the third set (cross-lingual gold sentence 0.29 → 0.36, page in 3
# 0.50 → 0.64): for this one constant they are not an independent check.
CROSS_PAGES = 2
# A card whose sentence introduces a list ("…不适用下列文书：") quotes it with its items up to
# the best one when that fits in LIST_ITEMS words or LIST_ITEMS_CJK Chinese characters (a card
# stays a passage's length), else the best item alone (0: the lead-in alone, as any sentence).
LIST_ITEMS = 70
LIST_ITEMS_CJK = 120
# Asked in the other language: the question's words are matched through the dictionary (bridge.py):
# a Chinese page's sentences are read with their English glosses, a Chinese question's with its own.
BRIDGE = True
BRIDGE_PAGES = 2        # pages found so, of each document in the other language (across.py)
CROSS_DOCS = 3          # at most this many documents searched so (each reads its sentence vectors)
# The question's vector for the sentences is made without the words naming its documents (runs of
# at least NAME_RUN capitalised words of a document's name or title, "the Common Paper Software License"):
# with them, the document's title line and its source note come close to every question on it. A
# lowercase name word ("our Bonterms cloud subscription") and a lone one ("TraceMonkey") stay.
NAME_RUN = 2
NAME_ZH = True          # tuning halves Chinese gold sentence 20 → 21 of 23; checking, third, fourth unchanged
DISTINCT = True
# A sentence holding a document's defined term ("Updates") counts as holding the question's words
# its definition holds ("updates and maintenance releases …"), at DEF_WEIGHT, when that definition
# holds DEF_SHARE of the question's weighted terms; at most DEF_TERMS definitions a document (definitions.py).
DEF_TERMS = 2
DEF_SHARE = 0.25
DEF_WEIGHT = 1.0
# A question asking what a term means ("what counts as Confidential Information?", "“个人信息处理者”是指谁？")
# whose words name one of a document's defined terms: the page defining it joins the candidates
# (DEF_PAGES a document) and its definition sentence gains DEF_ASKED (a law uses its defined term on
# every page, so the search alone seldom ranks the defining page first).
DEF_PAGES = 1
DEF_ASKED = 0.5


@dataclass(frozen=True)
class EvidenceCard:
    doc_id: int
    doc: str                  # the document's path as the user gave it
    number: int               # the document's number in the question (1 for a single document)
    page: int
    quote: str                # the page's own words, checked against the page
    clause: str               # "9. Governing Law and Jurisdiction", "第十条", or ""
    score: float
    share: float              # of the question's terms the quote holds
    meaning: float = field(default=0.0, kw_only=True)   # cosine of its sentence with the question (0: no vector)
    shape: float = field(default=0.0, kw_only=True)     # of `score`: the bonus for the kind of sentence asked for

    def citation(self) -> Citation:
        """The card as a verified citation: the window's highlight and the exports take these."""
        return Citation(self.doc_id, self.doc, self.page, self.quote, True, note=self.clause)

    def to_dict(self, ms: float) -> dict:
        return {"doc": self.doc, "page": self.page, "quote": self.quote, "clause": self.clause,
                "score": round(self.score, 3), "ms": round(ms, 1)}


@dataclass(frozen=True)
class Evidence:
    question: str
    cards: list[EvidenceCard]
    addressed: bool           # False: the documents do not appear to address the question
    ms: float                 # since the question was asked
    ranked: list = field(default_factory=list, repr=False)   # search pages, the cards' first
    # 0..1: how well the cards cover the question (addressed.py); `addressed` is support >= its threshold
    support: float = field(default=1.0, kw_only=True)
    judged: bool = field(default=False, kw_only=True)   # the reader model chose these cards (judge.py)
    rewritten: str = field(default="", kw_only=True)    # the model's wording the search also looked for (rewrite.py)
    no_figure: bool = field(default=False, kw_only=True)  # not addressed: the cards on topic set no figure asked for

    def to_dict(self) -> dict:
        return {"addressed": self.addressed, "support": round(self.support, 3), "ms": round(self.ms, 1),
                "cards": [c.to_dict(self.ms) for c in self.cards], **({"judged": True} if self.judged else {}),
                **({"no_figure": True} if self.no_figure else {})}

    @property
    def pages(self) -> list[tuple[int, int]]:
        return [(c.doc_id, c.page) for c in self.cards]


@dataclass
class _Candidate:
    ref: DocRef
    hit: object
    rank: int
    sentences: list[Sentence]
    words: list[Words]
    cos: list = field(default_factory=list)     # per sentence: cosine with the question, or None


def find_evidence(library, refs: list[DocRef], question: str, started: float | None = None,
                  ranked: list | None = None, most: int | None = None, least: int | None = None,
                  per_page: int | None = None) -> Evidence:
    """The evidence cards for `question` over `refs`; `started`: perf_counter when it was
    asked (the cards' `ms` counts from then); `ranked`: the search's pages if already known;
    `most`, `least`, `per_page`: how many cards (more for the reader to judge, judge.py)."""
    started = time.perf_counter() if started is None else started
    most, least, per_page = most or CARDS, least or AT_LEAST, per_page or PER_PAGE
    ranked = ranked if ranked is not None else ranked_hits(library, refs, question)
    ranked = _across_languages(library, refs, question, ranked)
    ranked, asked_defs = _definition_pages(library, refs, question, ranked)
    pool = ranked[:PAGES + CROSS_PAGES + BRIDGE_PAGES]
    docs = {ref.doc_id: _DocPages(library, ref) for ref, _ in pool}
    lang = textnorm.language(question)
    other = {d for d, pages in docs.items() if BRIDGE and pages.lang not in (lang, "mixed") and bridge.available()}
    candidates = [_candidate(docs[ref.doc_id], ref, hit, i, bridged=lang == "en" and ref.doc_id in other)
                  for i, (ref, hit) in enumerate(pool)]
    _add_meaning(library, question, candidates, list(docs.values()))
    asked = question + (" " + bridge.english_of(question) if lang == "zh" and other else "")
    terms = [t for t in question_terms(asked) if not any(d.names.has(t) for d in docs.values())]
    weights = TermWeights(terms, [w for c in candidates for w in c.words])
    for defined, stands_for in _paraphrased(library, docs, question, lang, weights):
        weights.alias(defined, stands_for, DEF_WEIGHT)
    best_hit = max((h.score for _, h in ranked), default=0.0) or 1.0
    best_cos = max((x for c in candidates for x in c.cos if x is not None), default=None)
    asks = question_shapes.shapes(question)
    cards = [card for c in candidates
             for card in _page_cards(docs[c.ref.doc_id], c, weights, best_hit, best_cos, asks, per_page,
                                     asked_defs.get(c.ref.doc_id, set()))]
    cards = _distinct(sorted(cards, key=lambda c: -c.score))
    keep = [c for c in cards[:most] if c.share > 0 or _close(c.meaning, best_cos)] if terms else cards[:most]
    cards = keep if len(keep) >= least else cards[:max(least, len(keep))]
    support, addressed, no_figure = addressed_signal(ranked, question, cards, best_cos)
    order: dict = {}
    for i, c in enumerate(cards):       # a page's place is its first card's
        order.setdefault((c.doc_id, c.page), i)
    reordered = sorted(ranked, key=lambda rh: order.get((rh[0].doc_id, rh[1].page), len(order)))
    return Evidence(question, cards, addressed, (time.perf_counter() - started) * 1000, reordered,
                    support=support, no_figure=no_figure)


def _definition_pages(library, refs: list[DocRef], question: str, ranked: list) -> tuple[list, dict]:
    """`ranked` with the pages defining the terms a definition question names (DEF_PAGES a
    document, those not among the search's first PAGES already, after them), and per document
    the (page, term) pairs whose definition sentence is asked for."""
    if not DEF_PAGES or "definition" not in question_shapes.asks(question) or len(refs) > CROSS_DOCS:
        return ranked, {}
    have = {(ref.doc_id, hit.page) for ref, hit in ranked[:PAGES]}
    floor = min((hit.score for _, hit in ranked[:PAGES]), default=0.0)
    added, asked = [], {}
    for ref in refs:
        info = library.get(ref.doc_id)
        for d in definitions.named_in(library, info, question)[:DEF_PAGES]:
            asked.setdefault(ref.doc_id, set()).add((d.page, d.term))
            if (ref.doc_id, d.page) not in have:
                have.add((ref.doc_id, d.page))
                added.append((ref, Hit(ref.doc_id, info.last_path or info.path, d.page, floor, "", "", d.page)))
    return (ranked[:PAGES] + added + ranked[PAGES:] if added else ranked), asked


def _paraphrased(library, docs: dict, question: str, lang: str, weights: TermWeights) -> list:
    """The documents' defined terms whose definitions the question paraphrases, with the question
    terms each stands for (definitions.py); documents in the question's language only."""
    if not (DEF_TERMS and weights.terms):
        return []
    return [found for d in docs.values() if d.lang in (lang, "mixed")
            for found in definitions.paraphrased(library, d.info, question, weights, DEF_SHARE, DEF_TERMS)]


def _distinct(cards: list[EvidenceCard]) -> list[EvidenceCard]:
    """The cards without those whose quote a better card of the same page holds whole (two
    sentences of one clause, each joined with its neighbour, can quote the same words twice)."""
    out, seen = [], []
    for card in cards:
        plain = "".join(card.quote.split())
        if DISTINCT and any(k == (card.doc_id, card.page) and plain in p for k, p in seen):
            continue
        out.append(card)
        seen.append(((card.doc_id, card.page), plain))
    return out


def _across_languages(library, refs: list[DocRef], question: str, ranked: list) -> list:
    """`ranked` with, after its first PAGES, the pages of each document in the other language
    whose sentences are closest to the question of all the document's sentences (CROSS_PAGES, by
    vector) and share most of its words through the dictionary (BRIDGE_PAGES, across.py), those
    not among them already: the search ranks passages, whose vectors blur a page's one answering
    sentence with its neighbours, and it has no shared words to go by."""
    vectors = CROSS_PAGES and dense.available() and hasattr(library, "sentence_pages")
    words = BRIDGE and BRIDGE_PAGES and hasattr(library, "page_text")
    if not (vectors or words) or len(refs) > CROSS_DOCS:
        return ranked
    lang = textnorm.language(question)
    have = {(ref.doc_id, hit.page) for ref, hit in ranked[:PAGES]}
    floor = min((hit.score for _, hit in ranked[:PAGES]), default=0.0)
    added = []
    for ref in refs:
        info = library.get(ref.doc_id)
        if info.lang in (lang, "mixed"):
            continue
        found = [p for p, _ in library.sentence_pages(ref.doc_id, question, CROSS_PAGES)] \
            if vectors and _meaning_ready(library, ref.doc_id) else []
        found += [p for p, _ in across.bridged_pages(library, info, question, BRIDGE_PAGES)] if words else []
        for page in found:
            if (ref.doc_id, page) not in have:
                have.add((ref.doc_id, page))
                added.append((ref, Hit(ref.doc_id, info.last_path or info.path, page, floor, "", "", page)))
    return ranked[:PAGES] + added + ranked[PAGES:] if added else ranked


_WORD = re.compile(r"[^\W_][\w'’.-]*")


def _unnamed(question: str, docs: list) -> str:
    """An English question without the runs of words that name its documents (NAME_RUN); a
    Chinese one without the names in its documents' titles ("劳动合同法", "民法典", NAME_ZH)."""
    if not NAME_RUN:
        return question
    if textnorm.language(question) == "zh":
        return _unnamed_zh(question, docs) if NAME_ZH else question
    if textnorm.language(question) != "en":
        return question
    words = list(_WORD.finditer(question))
    named = [m.group()[0].isupper() and any(d.names.has(m.group().casefold().rstrip(".")) for d in docs)
             for m in words]
    out, last, i = [], 0, 0
    while i < len(words):
        j = i
        while j < len(words) and named[j] and (j == i or not question[words[j - 1].end():words[j].start()].strip()):
            j += 1
        if j - i >= NAME_RUN:
            out.append(question[last:words[i].start()])
            last = words[j - 1].end()
        i = max(j, i + 1)
    out.append(question[last:])
    text = " ".join("".join(out).split())
    return text if len(text.split()) >= 3 else question


_TITLE_PART = re.compile(r"[\u4e00-\u9fff]{3,}")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _unnamed_zh(question: str, docs: list) -> str:
    parts = {p.removeprefix("中华人民共和国") for d in docs for p in _TITLE_PART.findall(d.info.title or "")}
    text = question
    for part in sorted((p for p in parts if len(p) >= 3), key=len, reverse=True):
        text = text.replace(f"《{part}》", "").replace(part, "")
    return text if len(_HAN.findall(text)) >= 6 else question       # enough left to mean something


def _add_meaning(library, question: str, candidates: list[_Candidate], docs: list) -> None:
    """Each candidate sentence's cosine with the question read without its documents' names
    (`_unnamed`), in documents whose sentence vectors are all there (`_meaning_ready`)."""
    if not dense.available() or not hasattr(library, "sentence_vectors"):
        return
    question = _unnamed(question, docs)
    ready = {d: _meaning_ready(library, d) for d in {c.ref.doc_id for c in candidates}}
    for c in candidates:
        stored = library.sentence_vectors(c.ref.doc_id, c.hit.page) if c.sentences and ready[c.ref.doc_id] else {}
        if stored:
            c.cos = sentence_vectors.similarity(
                question, [stored.get(sentence_vectors.key(s.text)) for s in c.sentences])


def _meaning_ready(library, doc_id: int) -> bool:
    """Sentences are ranked by meaning only in a document whose every sentence has its vector:
    while a long law's vectors are being computed, its embedded pages would outrank the rest by
    their vectors alone."""
    done = getattr(library, "sentence_vectors_done", None)
    return done is None or done(doc_id)


def _meaning(cos, best_cos) -> float:
    """0..1: how close a sentence is to the question, against the best candidate's cosine."""
    if cos is None or best_cos is None:
        return 0.0
    return max(0.0, cos - COS_FLOOR) / max(best_cos - COS_FLOOR, 1e-6)


def _defines(text: str, page: int, asked_defs: set) -> bool:
    """The sentence is the definition of a term the question asks about, on its page."""
    if not asked_defs or not any(p == page for p, _ in asked_defs):
        return False
    parsed = definitions.parse(text)
    return bool(parsed) and (page, parsed[0]) in asked_defs


def _joined(texts: list[str]) -> str:
    out = texts[0]
    for t in texts[1:]:
        out += ("" if textnorm.cjk_count(out[-1:]) else " ") + t
    return out


def _fits(text: str) -> bool:
    """The text is short enough for one card (LIST_ITEMS words, or LIST_ITEMS_CJK Chinese characters)."""
    cjk = textnorm.cjk_count(text)
    return cjk <= LIST_ITEMS_CJK if cjk > len(text) // 3 else len(text.split()) <= LIST_ITEMS


def _close(cos: float, best_cos) -> bool:
    return bool(cos) and _meaning(cos, best_cos) >= MEANING_MIN


class _DocPages(PageText):
    """One document's pages as the cards read them (PageText), and the words of its name (a
    question naming the document — "the Common Paper DPA" — does not make every sentence of
    it relevant)."""

    def __init__(self, library, ref: DocRef):
        info = library.get(ref.doc_id)
        super().__init__(lambda page: library.page_text(ref.doc_id, page), info.page_count)
        self.ref = ref
        self.lang = info.lang
        self.info = info
        self.names = Words.of(" ".join([ref.label.replace("-", " ").replace("_", " "), info.title or ""]))

    def only_names(self, words: Words) -> bool:
        """The sentence is no more than the document's name ("Bonterms Cloud Terms (Version
        1.0)"): it says nothing, though a question naming the document comes close to it."""
        named = [w for w in words.words if not w.isdigit()]
        return bool(named) and all(self.names.has(w) for w in named)


def _candidate(doc: _DocPages, ref: DocRef, hit, rank: int, bridged: bool = False) -> _Candidate:
    """The page's sentences and their words (`bridged`: a Chinese page read by an English
    question, each sentence's words with their English glosses)."""
    if hit.text.startswith(tables.MARKER):     # a table: its cell lines are the sentences
        lines = [" ".join(line.split()) for line in hit.text.splitlines()[1:] if line.strip()]
        sentences = [Sentence(line, "", False) for line in lines]
    else:
        sentences = doc.sentences(hit.page)
    words = [Words.of(f"{s.text} {bridge.english_of(s.text)}" if bridged else s.text) for s in sentences]
    return _Candidate(ref, hit, rank, sentences, words, [None] * len(sentences))


def _page_cards(doc: _DocPages, c: _Candidate, weights: TermWeights, best_hit: float, best_cos,
                asks: set[str], per_page: int | None = None, asked_defs: set = frozenset()) -> list[EvidenceCard]:
    """The page's best sentences (each with the next one when it adds to it), verified on
    the page, best first: at most PER_PAGE, the second only when it is about the question."""
    usable = [not (s.heading or quote_too_short(s.text) or doc.only_names(w)) for s, w in zip(c.sentences, c.words)]
    shares = [weights.share(w) if ok else 0.0 for ok, w in zip(usable, c.words)]
    if not any(usable):
        return []
    meaning = [_meaning(x, best_cos) if ok else 0.0 for ok, x in zip(usable, c.cos)]
    clause_share = {s.clause: weights.share(Words.of(s.clause)) for s in c.sentences}
    passage = "".join(c.hit.text.split()).casefold()
    bonus = [SHAPE_WEIGHT * sum(question_shapes.fits(a, s.text) for a in asks)
             + (DEF_ASKED if _defines(s.text, c.hit.page, asked_defs) else 0.0) for s in c.sentences]
    score = [sh + VECTOR_WEIGHT * m + CLAUSE_WEIGHT * clause_share[s.clause]
             + (CHUNK_WEIGHT if "".join(s.text.split()).casefold() in passage else 0.0) + b
             for sh, m, s, b in zip(shares, meaning, c.sentences, bonus)]
    about = [sh > 0 or m >= MEANING_MIN for sh, m in zip(shares, meaning)]
    order = sorted((j for j in range(len(score)) if usable[j]), key=lambda j: (-score[j], j))
    page_prior = PAGE_WEIGHT * (c.hit.score / best_hit)
    out: list[EvidenceCard] = []
    taken: set[int] = set()
    for i in order:
        if len(out) >= (per_page or PER_PAGE):
            break
        if (out and not about[i]) or i in taken:
            continue
        span, clause = [i], c.sentences[i].clause
        if (nxt := i + 1) < len(c.sentences) and usable[nxt] and c.sentences[nxt].clause == clause \
                and shares[nxt] >= SECOND_SENTENCE * shares[i] > 0 and not sentence_split.items_of(c.sentences, i):
            span.append(nxt)
        items = [j for j in sentence_split.items_of(c.sentences, span[-1]) if usable[j]] if LIST_ITEMS else []
        if items:       # a list's lead-in says little alone: quoted with its items up to the best one
            best = max(items, key=lambda j: (score[j], -j))
            whole = list(range(span[0], best + 1))
            if _fits(" ".join(c.sentences[j].text for j in whole)):
                span = whole
            elif len(span) == 1:        # too long: the best item alone, under its own clause
                span, clause = [best], c.sentences[best].clause
        text, taken = _joined([c.sentences[j].text for j in span]), taken | set(span)
        cited = verify_quote(c.ref.doc_id, c.ref.label, c.hit.page, text, {c.hit.page: doc.raw(c.hit.page)})
        if not cited.verified and not c.hit.text.startswith(tables.MARKER):
            continue
        share = max(shares[i], weights.share(Words.of(text)))
        # a page's second card ranks below every page's first (pages first, then depth)
        out.append(EvidenceCard(c.ref.doc_id, c.ref.label, c.ref.number, c.hit.page,
                                cited.quote if cited.verified else text, clause,
                                score[i] + page_prior - SECOND_CARD * len(out), share,
                                meaning=c.cos[i] or 0.0, shape=bonus[i]))
    return out
