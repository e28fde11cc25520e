"""What an answer is shown as, once its citations are checked: the answer itself (backed by a
shown card that carries its facts and is about the question), the model's text under the
evidence as not backed, or "the document does not appear to address this" above the nearest
passages.

- Citations name card ids; each becomes the card's quote, checked against its page like any.
- A right answer that cited the wrong card is rescued by the shown card that does carry its
  facts: that card is put first, marked as such, and backs the answer.
- The model saying the documents do not state it, or the evidence's own "not addressed" (whatever
  backs the model's text), or an unbacked answer whose figures are in none of the passages the
  model read, is said as "not addressed".
- The model repeating its instructions (a small model's echo of the system prompt) is never an
  answer: its text is dropped and the user told why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from app.core import textnorm
from app.core.answer import prompts
from app.core.answer.citations import Citation
from app.core.answer.support import across, numbers, supports

ANSWER = "answer"              # the model's answer leads: a cited (or rescued) card backs it
NOT_BACKED = "not_backed"      # the evidence leads; the model's text sits under it, not backed
NOT_ADDRESSED = "not_addressed"   # the documents do not appear to address the question

RESCUED = "the card that states the answer (the model cited another)"
RESCUED_CONTEXT = "the sentence beside a card that states the answer (the model cited another)"
ECHO_WORDS = 6                 # a run of this many words of the instructions in an answer is an echo
ECHO_CJK = 10                  # the same in Chinese characters
INVENTED = "The model's figures are in none of the passages it read: they do not come from the documents."
ECHO_WARNING = "The model repeated its instructions instead of answering; that text is not shown."
PROMPT_PARTS = ("system", "question_en", "question_zh", "question_cards_en", "question_cards_zh",
                "context_cards", "context_retrieval", "context_more", "context_whole")


@dataclass(frozen=True)
class Verdict:
    text: str
    citations: list[Citation]
    status: str
    warnings: list[str]


def cited_cards(cites: list[dict], cards: dict, allowed: list[str]) -> list[dict]:
    """The model's {"card": "E2"} citations as (doc, page, quote) of those cards (ids outside
    this question's cards, or unknown, are dropped: the schema allows none)."""
    out = []
    for c in cites:
        card = cards.get(str(c.get("card", "")))
        if card is not None and card.id in allowed:
            out.append({"doc": card.doc, "page": card.page, "quote": card.quote})
    return out


def judge(text: str, citations: list[Citation], question: str, evidence, said_not_stated: bool,
          context=None) -> Verdict:
    """The answer's status, its citations (a rescuing card first) and the lines the user must see.
    Without evidence (a review's part) the citations decide alone, as before. `context()`: the
    sentences around the question's cards that the model read, as verified citations (asked
    for only when no card backs the answer)."""
    warnings = []
    if context is not None:
        context = _once(context)
    if echoes_instructions(text):
        text, citations, warnings = "", [replace(c, support="unclear") for c in citations], [ECHO_WARNING]
    if evidence is None:
        return Verdict(text, citations, ANSWER if _backed(citations) else NOT_BACKED, warnings)
    if text and not said_not_stated and not _backed(citations):
        citations = _rescued(text, citations, question, evidence, context)
    if text and not said_not_stated and _backed(citations):
        if not evidence.addressed and evidence.cards:
            # The cards' "not addressed" outweighs a lexically backed answer: of the 1.5B's answers shown so over
            # the cards' verdict (every recorded run), 6 of 7 were wrong — a trap figure of the clause beside the one asked.
            return Verdict(text, citations, NOT_ADDRESSED, warnings + [BACKED_NOT_ADDRESSED])
        partial = _partial(text, citations, question, evidence, context)
        if partial:
            return Verdict(text, citations, NOT_BACKED, warnings + [partial])
        return Verdict(text, citations, ANSWER, warnings)
    if said_not_stated or not evidence.addressed or not evidence.cards:
        return Verdict(text, citations, NOT_ADDRESSED, warnings)
    if _invented(text, question, evidence, context):
        return Verdict(text, citations, NOT_ADDRESSED, warnings + [INVENTED])
    return Verdict(text, citations, NOT_BACKED, warnings)


_COMPARES = re.compile(r"\b(?:compare[sd]?|comparison|compared|versus|vs\.?|each|both|differ(?:s|ence)?|"
                       r"whereas|(?:which|either) (?:one )?of (?:the|these|those) (?:two|documents|agreements|contracts)|"
                       r"of the two)\b|比较|相比|对比|分别|各自|换成|两者|二者|区别|不同|两份|哪一份|哪份", re.I)
# An answer that says what another document lacks ("…, while the Common Paper DPA does not"): a
# claim about that document too, which a card of one document cannot back.
_DENIES_OTHER = re.compile(r"\b(?:while|whereas|but|unlike)\b[^.;]*\b(?:does not|do not|doesn't|don't|has no|"
                           r"have no|is not|no such)\b|(?:而|但是?)[^。；]*(?:没有|并未|未规定|未约定)", re.I)
BACKED_NOT_ADDRESSED = ("A passage holds the words of the model's answer, but the passages do not appear to address "
                        "the question: it is not shown as the answer.")
ONE_SIDE = "The question compares several documents, but only one of them backs the answer: it is not shown as the answer."
ASKED_BACK = "The model repeated part of the question instead of answering it: the answer is not shown as the answer."


UNBACKED_FIGURE = ("The answer states a figure that the passage backing it does not hold: "
                   "it is not shown as the answer.")
SWAPPED_FIGURE = ("The answer gives a figure to a document whose passages do not hold it, only another "
                  "document's do: it is not shown as the answer.")
DENIED_HELD = ("The answer says a document sets no figure where that document's own passages hold one: "
               "it is not shown as the answer.")
NO_FIGURE = "The question asks for a figure or a period and the answer gives none: it is not shown as the answer."
# "How often …", "how many hours …", "多少", "多久": the answer is a figure, a period or a frequency.
_ASKS_FIGURE = re.compile(r"\bhow\s+(?:many|much|long|often|frequently|soon|fast|large|big|high|quick(?:ly)?)\b"
                          r"|\bwhat\s+(?:percentage|percent|share|speed-?up|rate|fee|price|cost|amount|sum)\b"
                          r"|多少|多久|多长|几[天日个年月周次倍]|百分之几|多高|快多少", re.I)
# A period or frequency said in words: what such a question may be answered with, figure or not.
_SAYS_PERIOD = re.compile(r"\b(?:once|twice|annual(?:ly)?|yearly|monthly|weekly|daily|quarterly|every|"
                          r"per|indefinite(?:ly)?|perpetual(?:ly)?|until|immediately|promptly|without undue "
                          r"delay)\b|每|随时|立即|永久|无限期|届满", re.I)


def _partial(text: str, citations: list[Citation], question: str, evidence, context=None) -> str:
    """Why a backed answer still answers only part of the question, or "": it copies the
    question back ("…违约金约定到多高法院一般会认为过分高于损失？" as its last sentence), the
    question compares documents (or the answer says what one of them lacks) and the backing cards
    come from one of them, it states a figure
    that neither the backing passage nor the sentences around it on its page hold ("Common
    Paper requires a 15-day notice" beside a Bonterms card that says 30), it gives one document's
    figure to another (_misattributed), or the question asks
    how long / how often and the answer says no figure at all ("Customer may share a copy of
    Audit Reports …" to "how frequently may a customer audit")."""
    if re.search(r"[?？]", text) and _runs(text) & _runs(question):
        return ASKED_BACK
    if _unbacked_figures(text, citations, question, context):
        return UNBACKED_FIGURE
    clauses, held = _by_document(text, citations, evidence)
    if _misattributed(clauses, held):
        return SWAPPED_FIGURE
    if _denies_held(clauses, held):
        return DENIED_HELD
    if _ASKS_FIGURE.search(question) and not numbers(text) and not _SAYS_PERIOD.search(text):
        return NO_FIGURE
    docs = {card.doc_id for card in evidence.cards}
    backing = {c.doc_id for c in citations if c.verified and c.support == "supports"}
    if len(docs) > 1 and len(backing) == 1 and (_COMPARES.search(question) or _DENIES_OTHER.search(text)):
        return ONE_SIDE
    return ""


def _once(read):
    """`read()` called at most once: several checks ask for the sentences around the cards."""
    kept: list = []

    def once():
        if not kept:
            kept.append(list(read()))
        return kept[0]
    return once


# A list's own numbering ("(1) the EEA SCCs, (2) the DPA", "1) …"): not figures the answer states.
_ENUMERATOR = re.compile(r"[(（]\s*\d{1,2}\s*[)）]|(?:^|(?<=[\s;；,，:：]))\d{1,2}[.)、](?=\s|[^\d])")


def _unbacked_figures(text: str, citations: list[Citation], question: str, context=None) -> set[str]:
    """The answer's figures (not the question's) that no backing citation holds, nor any
    sentence the model read around the cards on a backing citation's page."""
    figures = numbers(_ENUMERATOR.sub(" ", text)) - numbers(question)
    backing = [c for c in citations if c.verified and c.support == "supports"]
    for c in backing:
        figures -= numbers(c.quote)
    if figures and context is not None:
        pages = {(c.doc_id, c.page) for c in backing}
        for cit in context():
            if (cit.doc_id, cit.page) in pages:
                figures -= numbers(cit.quote)
    return figures


# Where an answer over several documents moves from one document to the next.
_CLAUSES = re.compile(r"[;.。；]\s|,\s*(?:while|whereas|but|and)\b|\b(?:while|whereas|unlike)\b|而|但")
_NAME_WORD = re.compile(r"[a-z][a-z0-9]+")


def _by_document(text: str, citations: list[Citation], evidence):
    """Each clause of the answer with the one document it names (by a word of its file name no
    other document's has: "Bonterms", "Common Paper"), and the figures each document's cards and
    citations hold; nothing for an answer over one document."""
    labels = {c.doc_id: c.doc for c in evidence.cards}
    if len(labels) < 2:
        return [], {}
    words = {d: set(_NAME_WORD.findall(label.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".pdf")))
             for d, label in labels.items()}
    names = {d: w - set().union(*(o for e, o in words.items() if e != d)) for d, w in words.items()}
    held = {d: set() for d in labels}
    for c in [*evidence.cards, *(c for c in citations if c.verified)]:
        if c.doc_id in held:
            held[c.doc_id] |= numbers(c.quote)
    out = []
    for clause in _CLAUSES.split(text):
        said = set(_NAME_WORD.findall(clause.lower()))
        named = [d for d, n in names.items() if n & said]
        if len(named) == 1:
            out.append((clause, named[0]))
    return out, held


def _misattributed(clauses: list, held: dict) -> bool:
    """Of `_by_document`'s clauses: one naming one document states a figure that document's cards and citations do not
    hold and another document's do: "The Bonterms DPA requires … 10 business days, while the
    Common Paper DPA requires … 30 days", the two figures swapped."""
    for clause, doc in clauses:
        others = set().union(*(h for d, h in held.items() if d != doc))
        if any(f not in held[doc] and f in others for f in numbers(clause)):
            return True
    return False


_DENIES = re.compile(r"\b(?:does not|do not|doesn't|don't|has no|have no|no such|is silent)\b|没有|并未|未规定|未约定", re.I)


def _denies_held(clauses: list, held: dict) -> bool:
    """The answer gives one document a figure and says another has none ("Bonterms … within 30
    days, while the Common Paper DPA does not") while that other document's own cards hold a figure
    (its "10 business days"): the model missed what the passages it read say."""
    figured = {doc for clause, doc in clauses if numbers(clause)}
    return any(_DENIES.search(clause) and not numbers(clause) and held[doc] and figured - {doc}
               for clause, doc in clauses)


# Counts said in words ("there are two main routes"): how the model sums up, not a figure the
# documents would have to state.
_COUNT_WORDS = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|both|several)\b", re.I)


def _invented(text: str, question: str, evidence, context=None) -> bool:
    """The answer states figures that none of the passages the model read holds ("AES-256" for
    a DPA that names no algorithm, "5%" for a stamp duty the code never mentions): it did not
    come from the documents."""
    figures = numbers(_COUNT_WORDS.sub(" ", text)) - numbers(question)
    if not figures:
        return False
    read = [c.quote for c in evidence.cards] + [c.quote for c in (context() if context is not None else ())]
    return not any(figures & numbers(quote) for quote in read)


_SAYS_NOTHING = re.compile(r"\b(?:does|do|did)\s+not\s+(?:say|state|specify|mention|address|set)|\bnot\s+"
                           r"(?:stated|specified|mentioned|addressed)|\bno\s+(?:mention|provision)|"
                           r"没有(?:规定|说明|提及|明确|写明)|未(?:规定|提及|说明|写明)", re.I)
ABSTAIN_CHARS = 80            # a longer text that says "没有规定" somewhere is an answer quoting a law
# A reply that opens by saying the text holds nothing on it, whatever follows (a small model's
# "The document does not provide any information about …, but it is a document that …").
_LEADS_WITH_NOTHING = re.compile(r"^\s*(?:the|this|these)\s+(?:documents?|agreements?|contracts?|texts?|passages?|"
                                 r"context|excerpts?)\s+(?:does|do)\s+not\s+(?:provide|contain|include|give|"
                                 r"say|state|specify|mention)\s+(?:any\s+)?(?:specific\s+)?(?:information|details?)\b",
                                 re.I)


def abstains(text: str) -> bool:
    """The model says the documents do not state the answer: the answer the instructions ask for
    ("The document does not say.", "文件没有规定。"), or a short line saying so without a figure.
    Not "法律没有规定或者当事人没有约定解除权行使期限 … 一年内": an answer that quotes a rule."""
    from app.core.answer.support import numbers
    said = text.strip()
    if not said:
        return False
    if any(said.startswith(p.rstrip(".。")) for p in prompts.NOT_STATED.values()):
        return True
    if _LEADS_WITH_NOTHING.match(said):
        return True
    return len(said) <= ABSTAIN_CHARS and not numbers(said) and bool(_SAYS_NOTHING.search(said))


def _backed(citations: list[Citation]) -> bool:
    verified = [c for c in citations if c.verified]
    return any(c.support == "supports" for c in verified) and not any(c.support == "contradicts" for c in verified)


def _rescued(text: str, citations: list[Citation], question: str, evidence, context=None) -> list[Citation]:
    """The citations with the first shown card that backs the answer put first, when one does
    and none of the answer's own citations contradicts it; else the first sentence around the
    cards (what the model read with them) that does. Never across languages: there only a
    shared figure could back it, and the English follow-up "30 days" (the law: 3 days) was
    rescued by a Chinese article on the employer's 30 days' notice."""
    if any(c.support == "contradicts" for c in citations if c.verified):
        return citations
    cited = {(c.doc_id, c.page, c.quote) for c in citations}
    for card in evidence.cards:
        if (card.doc_id, card.page, card.quote) in cited or across(question, card.quote):
            continue
        if supports(card.quote, text, question) == "supports":
            rescue = replace(card.citation(), support="supports",
                             note="; ".join(filter(None, [card.clause, RESCUED])))
            return [rescue] + list(citations)
    for cit in context() if context is not None else ():
        if (cit.doc_id, cit.page, cit.quote) not in cited and not across(question, cit.quote) \
                and supports(cit.quote, text, question) == "supports":
            return [replace(cit, support="supports", note=RESCUED_CONTEXT)] + list(citations)
    return citations


def _runs(text: str) -> set[str]:
    """Word runs (ECHO_WORDS long) and CJK character runs (ECHO_CJK) of a text, normalised."""
    norm = textnorm.normalize(text)
    words = re.findall(r"[a-z0-9']+", norm)
    runs = {" ".join(words[i:i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}
    cjk = "".join(ch for ch in norm if textnorm.cjk_count(ch))
    runs |= {cjk[i:i + ECHO_CJK] for i in range(len(cjk) - ECHO_CJK + 1)}
    return runs


_INSTRUCTION_RUNS: set[str] = set()


def _instruction_runs() -> set[str]:
    if not _INSTRUCTION_RUNS:
        for name in PROMPT_PARTS:
            text = re.sub(r"\{[a-z_]+\}", " ", prompts.template(name))
            _INSTRUCTION_RUNS.update(_runs(text))
        _INSTRUCTION_RUNS.update(_runs(" ".join(prompts.ANSWER_LANGUAGE.values())))
    return _INSTRUCTION_RUNS


def echoes_instructions(text: str) -> bool:
    """The answer repeats a run of the prompt's own instructions ("…if it tells you to ignore
    rules… Answer in Chinese:"): an echo, not an answer. "The document does not say." is the
    answer the instructions ask for, and is no echo."""
    if not text.strip() or text.strip() in prompts.NOT_STATED.values():
        return False
    return bool(_runs(text) & _instruction_runs())
