"""Does a cited quote support the answer's claim? The second check after "quote found".

`citations.verify` only proves that the words are on the page. A lawyer reads a badge as
"the claim is supported", so this scores the quote against the answer and the question:

- "contradicts": the quote and the answer state different figures (the answer says 30
  days, the quote 60), or one denies what the other asserts over shared words ("either
  party may terminate for convenience" cited for "No"), or the answer claims nothing is
  owed/required while the quote states an amount. A quote that is itself an instruction
  to the model (prompt injection) never supports anything.
- "supports": the figures agree (all of the answer's numbers are in the quote) and the
  quote holds enough of the answer's content words, or of the question's when the answer
  is short ("Yes.").
- "unclear": anything else, shown as "does not obviously support it". Across languages
  (an English answer citing a Chinese article) words are shared through the dictionary
  (search/bridge.py), at a higher share; agreeing figures alone support.

Question-aware: a quote supports (or contradicts) only when it is about the question — it
holds one of the question's key terms (ABOUT_TERMS; words every clause of a contract has,
"party", "agreement", "customer", do not count), two when only a figure backs the answer. A quote that merely shares a number with the
answer ("Customer will have 15 days to review …" cited for "the customer must give 15 days'
notice" to end a statement of work) is "unclear", and so is one whose figures differ while it
speaks of something else (it contradicts nothing the question asked).

A term the question puts in quotation marks ("what does “电子签名制作数据” mean?") names what is
asked about. A quote that defines a shorter term inside it (本法所称电子签名，是指…) and does not
hold the named term whole answers for the shorter term: "unclear". Only that case: a quote that
does not hold the named term otherwise may still answer it (a paraphrase, the next sentence).

A Chinese law sets penalties in tiers, one sentence each (…罚款；情节严重的，…五千万元以下罚款): a
question about one tier (情节严重) is backed only by a quote naming that tier, not by the
ordinary tier's sentence with its own figure.

Lexical, not semantic: cheap, explainable, no model. Measured on dev.jsonl with the gold
quote and gold answer (should support) against the gold quote and another question's
answer about the same document (should not): see tests/core/test_support.py and the figures in
docs/DESIGN-CHANGES.md.
"""
from __future__ import annotations

import re

from app.core.answer.injection import looks_like_instruction
from app.core.documents.structure import cn_to_int
from app.core.search import bridge
from app.core.search.queries import parse_query
from app.core.search.tokens import index_text, phrase_word
from app.core.textnorm import cjk_count, normalize

ANSWER_SHARE = 0.25     # of the answer's content words found in the quote
WITH_FIGURES = 0.15     # the same when a figure of the answer is in the quote
QUESTION_SHARE = 0.4    # of the question's, for a bare "Yes." / "No."
POLARITY_SHARE = 0.5    # of the question's, before a yes/no against the quote's negation counts
ABOUT_TERMS = 1         # of the question's key terms a quote holds, before it is about the question at all
FIGURE_ABOUT_TERMS = 2  # the same when all the quote backs is a figure ("15 days")
BRIDGE = True           # across languages, words are shared through the dictionary (else only figures)
# Across languages a gloss list is long ("解除" → free lift relieve remove rescind …), so stray
# matches are common: the answer's words must be held twice as often as within a language. Chosen
# on the tuning halves (benchmarks/support.py: own answers 0.27 → 0.45 backed, others' 0.015 →
# 0.018; at 0.25, 0.73 and 0.109). Asking the quote to hold a share of the question's key terms
# by gloss as well lost more own answers than others' (at 0.2: 0.36 own, 0.047 others').
ACROSS_ANSWER_SHARE = 0.5
# Words nearly every sentence of a contract or a law has: they say nothing of what a sentence is about.
_GENERIC = frozenset("""party parties agreement contract document customer provider supplier vendor company
section clause term terms may must shall will does what which when how who whom where this that under
time long much many soon once before after over against get give
合同 协议 双方 当事人 规定 条款 法律 本法 一方 甲方 乙方 没有 行使 时间 权利 可以 应当 是否 什么 多长 多少
哪些 如果 以及 期间""".split())

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD_NUMBER = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_WORD_NUMBER.update({"thirty": "30", "forty": "40", "forty-five": "45", "sixty": "60", "ninety": "90",
                     "hundred": "100", "twice": "2", "double": "2", "triple": "3"})
_WORD_NUMBER_RE = re.compile(r"\b(?:" + "|".join(sorted(_WORD_NUMBER, key=len, reverse=True)) + r")\b", re.I)
# Section references are where a figure is, not the figure: "Section 5.2(b)", "第五百零六条".
_REFERENCE = re.compile(r"(?:\b(?:sections?|clauses?|articles?|arts?\.|ss?\.)|§|paragraphs?|annex|schedule|exhibit)\s*"
                        r"\d+(?:\.\d+)*(?:\s*\([a-z0-9]+\))*|第[零〇一二两三四五六七八九十百千\d.]+[条款项章节编]", re.I)
# "2 million" is 2000000, as "二百万" is.
_SCALED = re.compile(r"(\d+(?:\.\d+)?)\s*(thousand|million|billion)\b", re.I)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
# A clause's own number at the start of a quote ("2.35. “SOW” means …", "12. Governing Law"): not a figure.
_LEADING_NUMBER = re.compile(r"^\s*\d+(?:\.\d+)*\.\s+(?=[\"“'(a-z])", re.I)
_NEG_EN = re.compile(r"\b(?:not|no|never|none|nothing|neither|nor|cannot|without|exclude[sd]?)\b|n't\b", re.I)
_NEG_ZH = re.compile(r"不|没有|无|未|非|禁止")
_YES = re.compile(r"^\s*(?:yes\b|是的|是(?:[。，,！!]|\s*$)|可以|能|有权|应当|会)", re.I)
_NO = re.compile(r"^\s*(?:no\b|不|否|没有|无权|无效)", re.I)
_NOTHING_OWED = re.compile(r"\b(?:owes?|pay|pays|payable|due)\s+(?:nothing|no\b|zero|0\b)|\bnothing\s+(?:is\s+)?"
                           r"(?:owed|due|payable)|\bfree of charge\b|不欠|无需支付|不用支付|免费", re.I)


def numbers(text: str) -> set[str]:
    """Figures in a text, normalised ("1,850.00" → "1850", "three" → "3", "二十" → "20");
    section references ("Section 5.2", "第五百零六条") are left out."""
    text = _REFERENCE.sub(" ", _LEADING_NUMBER.sub(" ", normalize(text)))
    text = _SCALED.sub(lambda m: _figure(float(m.group(1)) * _SCALE[m.group(2).lower()]), text)
    out = set()
    for m in _NUMBER.finditer(text):
        try:
            out.add(_figure(float(m.group().replace(",", ""))))
        except ValueError:
            continue
    out |= {_WORD_NUMBER[w.lower()] for w in _WORD_NUMBER_RE.findall(text)}
    for run in _CN_NUMBER.findall(text):
        value = cn_to_int(run)
        if value is not None:
            out.add(_figure(value))
    return out


# "一" alone is "a"/"one" everywhere; before a unit of time it is a figure ("一年内", "一个月").
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]{2,}|[二三四五六七八九十](?=[日天月年个%])"
                        r"|一(?=[日天月年周]|个月|个工作日|个小时)")


def _figure(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


# Chinese words that hold 不/无/非/未 without denying anything: bounds ("不满十四周岁", "不少于") and
# terms of art ("无固定期限劳动合同", "未成年人", "不可抗力", "不定期合同", "包括但不限于").
_NOT_DENIAL_ZH = re.compile(r"未成年|不满|不少于|不低于|不高于|不超过|不足|不限于|无固定期限|不定期|不可抗力|不动产|非法人")


def _negated(text: str) -> bool:
    if cjk_count(text) > len(text) // 3:
        return bool(_NEG_ZH.search(_NOT_DENIAL_ZH.sub("", text)))
    return bool(_NEG_EN.search(text))


def _terms(text: str) -> list[str]:
    return [t for t in parse_query(text).terms if not t.endswith("*") and not t[:1].isdigit()]


def _share(terms: list[str], quote: str) -> float:
    if not terms:
        return 0.0
    prefixes = _prefixes(index_text(quote))     # "(Damages" is the word "damages"
    plain = "".join(quote.split()).casefold()   # Chinese words as written, not as bigrams
    got = sum(1 for t in terms if (phrase_word(t) in plain if not t.isascii() else t[:5] in prefixes))
    return got / len(terms)


def _share_across(terms: list[str], quote: str) -> float:
    """`_share` between languages, through the dictionary (search/bridge.py): an English term is
    held by a Chinese quote that has a word glossed so ("penalty" ← 违约金), a Chinese term by an
    English quote holding one of its glosses (违约金 → "penalty"). 0 without the dictionary."""
    if not terms or not bridge.available():
        return 0.0
    if cjk_count(quote) > len(quote) // 4:
        glossed = _prefixes(bridge.english_of(quote))
        got = sum(1 for t in terms if t.isascii() and t[:5] in glossed)
    else:
        held = _prefixes(index_text(quote))
        got = sum(1 for t in terms if not t.isascii()
                  and any(w[:5] in held for w in bridge.english_of(phrase_word(t)).split()))
    return got / len(terms)


def _prefixes(text: str) -> set[str]:
    """The first five letters of each word: how English words are matched (damages ~ damage)."""
    return {w[:5] for w in re.findall(r"\w+", text.casefold())}


def _share_of(terms: list[str], text: str, quote: str) -> float:
    """The share of `terms` (of `text`) the quote holds, through the dictionary across languages."""
    return _share_across(terms, quote) if BRIDGE and across(text, quote) else _share(terms, quote)


def _key_terms(question: str) -> list[str]:
    return [t for t in _terms(question) if t.casefold() not in _GENERIC]


# Words naming what kind of figure is asked for ("how many days", "what percentage", "多少天"): a
# quote backing only a figure must be about the question beyond them ("30 days" of a cure period
# is no answer to "how many days' notice of non-renewal").
_UNIT_WORDS = frozenset("""day days hour hours week weeks month months year years percent percentage
percentages rate amount number minimum maximum 天 日 小时 月 年 周 百分之 比例 多少 几天""".split())


def figure_about_terms(question: str, quote: str) -> int | None:
    """about_terms without the words that only name the kind of figure asked for."""
    terms = [t for t in _key_terms(question) if t.casefold() not in _UNIT_WORDS]
    if not terms or across(question, quote):
        return None
    return round(_share(terms, quote) * len(terms))


def about_terms(question: str, quote: str) -> int | None:
    """How many of the question's key terms the quote holds; None when there is nothing to
    count (the question has none, or it is in the other language than the quote)."""
    terms = _key_terms(question)
    if not terms or across(question, quote):
        return None
    return round(_share(terms, quote) * len(terms))


def across(question: str, quote: str) -> bool:
    """A question in one language about a quote in the other: no shared words to count."""
    return (cjk_count(question) > len(question) // 4) != (cjk_count(quote) > len(quote) // 4)


# A term the question quotes: “…”, "…", 「…」, 『…』 (2–40 characters, not a whole sentence).
_NAMED = re.compile(r"[“\"「『]([^”\"」』]{2,40})[”\"」』]")


def named_terms(question: str) -> list[str]:
    """The terms the question puts in quotation marks, as written."""
    return [m.strip() for m in _NAMED.findall(question) if m.strip() and not re.search(r"[。？?！!]", m)]


# What a quote defines: "本法所称电子签名，是指", "去标识化，是指", "“General Cap” means".
_DEFINES = re.compile(r"(?:所称|^|[。；;，,：:）)条])([\u4e00-\u9fff]{2,16})[，,]?是指"
                      r"|[“\"]([^”\"]{2,40})[”\"]\s+(?:means|shall mean|has the meaning)", re.I)


def _squash(text: str) -> str:
    return "".join(normalize(text).split()).casefold()


def defines_part_of_named(question: str, quote: str) -> bool:
    """Does the quote define a term that is only part of a term the question names, without
    holding the named term? (电子签名's definition cited for “电子签名制作数据”.)"""
    named = [_squash(t) for t in named_terms(question)]
    if not named:
        return False
    defined = {_squash(re.split(r"所称|条", a)[-1] if a else b) for a, b in _DEFINES.findall(normalize(quote))}
    held = _squash(quote)
    return any(d and d != n and d in n and n not in held for n in named for d in defined)


_TIER = re.compile(r"情节(?:特别)?严重|情节(?:较轻|轻微)|特别严重")


def other_tier(question: str, quote: str) -> bool:
    """The question asks about a penalty tier (情节严重) the quote does not name."""
    tiers = set(_TIER.findall(normalize(question)))
    return bool(tiers) and not across(question, quote) and not any(t in normalize(quote) for t in tiers)


def supports(quote: str, answer: str, question: str) -> str:
    """"supports" | "unclear" | "contradicts": whether the quote backs the answer's claim."""
    if not quote.strip():
        return "unclear"
    if looks_like_instruction(quote):
        return "contradicts"        # words aimed at the model are no evidence
    q_terms = _terms(question)
    on_question = _share_of(q_terms, question, quote)
    about = about_terms(question, quote)
    if about is not None and about < ABOUT_TERMS:
        return "unclear"            # about something else, whatever figures it shares
    bridged = BRIDGE and about is None and across(question, quote) and bridge.available()
    if defines_part_of_named(question, quote):
        return "unclear"            # the definition of 电子签名, cited for “电子签名制作数据”
    if other_tier(question, quote):
        return "unclear"            # the ordinary tier's fine cited for 情节严重
    a_nums, q_nums = numbers(answer) - numbers(question), numbers(quote)
    if _NOTHING_OWED.search(answer) and q_nums:
        return "contradicts"        # "owes nothing" against a quote that states an amount
    if a_nums and q_nums and not a_nums & q_nums:
        return "contradicts"        # different figures
    polarity = "yes" if _YES.match(answer) else "no" if _NO.match(answer) else ""
    if polarity and on_question >= POLARITY_SHARE and (polarity == "no") != _negated(quote):
        return "contradicts"        # "No." against "either party may terminate for convenience"
    own = [t for t in _terms(answer) if t not in q_terms]
    overlap = _share_of(own, answer, quote)
    if a_nums & q_nums:             # a figure of the answer is in the quote
        two_languages = (cjk_count(answer) > 0) != (cjk_count(quote) > 0)   # no shared words to count
        on_topic = figure_about_terms(question, quote)
        short = len(own) <= 2 and (on_topic is None or on_topic >= FIGURE_ABOUT_TERMS)   # "US$1,000 (Section 21)."
        enough = overlap >= WITH_FIGURES or on_question >= QUESTION_SHARE
        return "supports" if two_languages or short or enough else "unclear"
    if len(own) <= 2:               # "Yes." / "四年。": the question says what is claimed
        # and a bare yes/no is backed only by a quote holding half the question's key words:
        # "No" to "required to carry cyber insurance?" was backed by a "Health Insurance" definition.
        # Not in Chinese, whose key terms are phrases a paraphrase splits ("解除合同", "解除委托合同").
        keys = len(_key_terms(question))
        held = about is None or cjk_count(question) > 0 or 2 * about >= keys
        if not polarity and own:
            # "Provider." to "who owns the feedback?": the quote must hold what the answer adds
            # and be about the question ("Provider may use all Feedback freely").
            named = overlap == 1.0 and (about is None or about >= FIGURE_ABOUT_TERMS)
            return "supports" if named and held and on_question >= QUESTION_SHARE else "unclear"
        # A bare yes/no is backed only where its opposite would be contradicted (POLARITY_SHARE): below
        # it the check backs "Yes" and "No" alike (benchmarks/support.py's "bare opposite" column).
        return "supports" if polarity and held and on_question >= max(QUESTION_SHARE, POLARITY_SHARE) else "unclear"
    return "supports" if overlap >= (ACROSS_ANSWER_SHARE if bridged else ANSWER_SHARE) else "unclear"
