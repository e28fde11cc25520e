"""Right or wrong: a model's answer judged against an eval question's gold answer, on the facts
a reader can check, in English and Chinese. Pure Python, no model.

The standard (benchmarks/eval/judge-agreement.jsonl holds a person's verdicts by it):
an answer is right when it states the gold answer's main fact: its yes or no, its numbers
(value and kind of unit: 三十日 = 30 days, 6个月 = six months = 6 months, 百分之二十 = 20 %,
五千万元 = 50,000,000 of money), and, where the gold has neither, enough of its own words (the
ones the question did not already use). "Main" is the gold's first part (up to the first ';');
a comparison's every part, one per document, and a numeric question's every figure. Section
and article numbers in the gold are citations, not facts, unless the gold is nothing but a
clause (a cross-reference answer such as "Section 22.5 …"). An answer that says the document does not say is a refusal, judged apart.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# --- refusals -------------------------------------------------------------------------------------
_REFUSALS_EN = ("does not say", "doesn't say", "not stated", "does not state", "does not specify",
                "not specified", "does not mention", "not mentioned", "does not address", "not addressed",
                "does not provide", "does not contain", "no information", "does not appear to",
                "is not specified", "no mention", "cannot be determined", "not found in the")
_REFUSALS_ZH = ("没有规定", "未规定", "没有说明", "未说明", "未提及", "没有提及", "没有提到", "未提到",
                "没有涉及", "未涉及", "无法确定", "没有明确", "未明确", "不涉及", "文件中没有", "文档中没有")


def is_refusal(text: str) -> bool:
    """The answer says the document does not state it (any language)."""
    low = " ".join(text.lower().split())
    return not low or any(p in low for p in _REFUSALS_EN) or any(p in text for p in _REFUSALS_ZH)


# --- numbers --------------------------------------------------------------------------------------
_EN_NUM = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
           "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
           "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60, "seventy": 70,
           "eighty": 80, "ninety": 90, "hundred": 100, "once": 1, "twice": 2, "thrice": 3,
           "double": 2, "treble": 3, "triple": 3, "a": 1, "an": 1}
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
_ZH_NUMERAL = "零〇一二三四五六七八九十百千万亿两"


def zh_number(text: str) -> float | None:
    """三十 → 30, 二十四 → 24, 五千万 → 50,000,000, 百分之二十's 二十 → 20, 十九 → 19."""
    if not text or any(ch not in _ZH_NUMERAL for ch in text):
        return None
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in _ZH_DIGIT:
            digit = _ZH_DIGIT[ch]
        elif ch in _ZH_UNIT:
            section += (1 if digit is None else digit) * _ZH_UNIT[ch]
            digit = None
        else:                                   # 万 / 亿
            section += digit or 0
            total += (section or 1) * _ZH_BIG[ch]
            section, digit = 0, None
    return float(total + section + (digit or 0))


# units: the kind a number is of; equal kinds compare, and years/months/weeks/days convert
_UNIT_WORDS = [
    (r"business days?|working days?|工作日", "day"),
    (r"calendar days?|days?|日|天", "day"),
    (r"weeks?|周(?!岁)|星期", "week"),
    (r"months?|个月|月", "month"),
    (r"years?(?: old)?|周岁|年", "year"),
    (r"hours?|小时", "hour"),
    (r"minutes?|分钟", "minute"),
    (r"percent|per cent|%|％", "pct"),
    (r"times|x\b|×|倍", "times"),
    (r"million", "million"),
    (r"元|yuan|rmb", "money"),
]
_UNIT_RE = "|".join(f"(?:{p})" for p, _ in _UNIT_WORDS)
_NUM_EN = r"\d[\d,]*(?:\.\d+)?"
_NUM_WORD = "|".join(sorted((re.escape(w) for w in _EN_NUM if len(w) > 2), key=len, reverse=True))
_CLAUSE = re.compile(
    r"(?:sections?|§|articles?|clauses?|paragraphs?|parts?|subparts?|modules?)\s*[\dIVX]+(?:\.\d+)*(?:\([a-z0-9]+\))*"
    r"(?:\s*(?:,|and|or)\s*\d+(?:\.\d+)*)*"
    r"|\b(?:ss?|arts?)\.\s*\d+(?:\.\d+)*(?:\([a-z0-9]+\))*"     # "s. 14.2", "Art. 829": citations too
    r"|(?<=\()(?:[A-Z][\w.-]*\s+){1,6}\d+(?:\.\d+)+(?:\([a-z0-9]+\))*"  # "(Common Paper BAA 3.3)"
    r"|第[零〇一二三四五六七八九十百千两\d]+(?:\.\d+)*(?:[或和、至]\d+(?:\.\d+)*)*[条款章节项]", re.I)
_MONEY_PREFIX = r"(?:US\$|USD\s?|\$|RMB\s?|€|£)"


@dataclass(frozen=True)
class Fact:
    kind: str            # "day", "month", "year", "pct", "times", "money", "num", …
    value: float

    def days(self) -> float | None:
        scale = {"day": 1, "week": 7, "month": 30, "year": 360}.get(self.kind)
        return None if scale is None else self.value * scale


def _unit_kind(word: str) -> str:
    w = word.lower().strip()
    for pattern, kind in _UNIT_WORDS:
        if re.fullmatch(pattern, w):
            return kind
    return "num"


def _clean(text: str) -> str:
    """Clause references out (they are citations, not facts), hyphens of "12-month" spaced."""
    text = _CLAUSE.sub(" ", text)
    text = re.sub(r"(\d)-(?=[a-z])", r"\1 ", text)
    text = re.sub(r"\(\s*(?:\d|[ivx]+|[a-z])\s*\)", " ", text)            # enumerators "(1)", "(b)"
    return re.sub(r"\b(\d+)\s*\(\s*\1\s*\)", r"\1", text)      # "three (3)" style doubles


def numbers(text: str) -> list[Fact]:
    """Every number with its kind of unit, in order: "15 days", "99.9%", "US$1,000", "三十日",
    "6个月", "百分之二十", "fifty percent", "2x", "RMB 2 million", "五千万元"."""
    text = _clean(text)
    found: list[tuple[int, Fact]] = []
    taken: list[tuple[int, int]] = []

    def add(m, fact: Fact):
        if not any(a <= m.start() < b for a, b in taken):
            taken.append((m.start(), m.end()))
            found.append((m.start(), fact))

    for m in re.finditer(r"百分之([零〇一二三四五六七八九十百两\d.]+)", text):
        v = _num(m.group(1))
        if v is not None:
            add(m, Fact("pct", v))
    zh_money = r"(?P<zn>[零〇一二三四五六七八九十百千万亿两\d.]+)\s*(?P<zu>万元|亿元|元)"
    for m in re.finditer(zh_money, text):
        digits, scale = m.group("zn"), {"万元": 10_000, "亿元": 100_000_000}.get(m.group("zu"), 1)
        if digits[-1] in _ZH_BIG and re.fullmatch(r"[\d.]+[万亿]", digits):      # "70万元"
            digits, scale = digits[:-1], _ZH_BIG[digits[-1]]
        v = _num(digits)
        if v is not None:
            add(m, Fact("money", v * scale))
    for m in re.finditer(rf"{_MONEY_PREFIX}\s?(?P<n>{_NUM_EN})(?:\s*(?P<big>million|thousand|billion))?", text, re.I):
        v = float(m.group("n").replace(",", ""))
        v *= {"million": 1e6, "thousand": 1e3, "billion": 1e9}.get((m.group("big") or "").lower(), 1)
        add(m, Fact("money", v))
    for m in re.finditer(rf"(?P<n>{_NUM_EN})\s*(?P<big>million|thousand)\b", text, re.I):
        v = float(m.group("n").replace(",", "")) * (1e6 if m.group("big").lower() == "million" else 1e3)
        add(m, Fact("money", v))
    for m in re.finditer(rf"(?P<n>[零〇一二三四五六七八九十百千万两]+|\d+(?:\.\d+)?)\s*(?P<u>{_UNIT_RE})", text, re.I):
        v = _num(m.group("n"))
        if v is not None:
            add(m, Fact(_unit_kind(m.group("u")), v))
    for m in re.finditer(rf"\b(?P<n>{_NUM_EN}|{_NUM_WORD})(?:[\s-]+(?:consecutive|business|calendar|full|"
                         rf"working|successive|additional|more))*[\s-]*(?P<u>{_UNIT_RE})?", text, re.I):
        word = m.group("n").lower()
        v = float(word.replace(",", "")) if word[0].isdigit() else _EN_NUM.get(word)
        unit = m.group("u")
        if v is None or (not word[0].isdigit() and not unit):
            continue                            # "one of", "a", "an" without a unit: not a number
        add(m, Fact(_unit_kind(unit) if unit else "num", float(v)))
    for m in re.finditer(r"[零〇一二三四五六七八九十百千万亿两]{2,}", text):   # one character: 一般, 统一
        v = zh_number(m.group())
        if v is not None:
            add(m, Fact("num", v))
    return [f for _, f in sorted(found, key=lambda x: x[0]) if f.kind != "million"]


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return zh_number(text)


def same_fact(gold: Fact, got: Fact) -> bool:
    if abs(gold.value - got.value) < 1e-6 and (gold.kind == got.kind or "num" in (gold.kind, got.kind)):
        return True
    a, b = gold.days(), got.days()
    return a is not None and b is not None and abs(a - b) < 1e-6 and (gold.kind, got.kind) in (
        ("year", "month"), ("month", "year"), ("week", "day"), ("day", "week"))


def has_fact(gold: Fact, answer_facts: list[Fact]) -> bool:
    return any(same_fact(gold, f) for f in answer_facts)


# --- yes / no -------------------------------------------------------------------------------------
_YES_EN = re.compile(r"^(yes|generally yes|correct|true|it can|it may|they can|you can)\b", re.I)
_NO_EN = re.compile(r"^(no|not|never|none|neither|it cannot|it can't|it may not|they cannot|you cannot)\b"
                    r"(?!\s+(?:more|later|less|fewer|sooner|earlier|longer)\b)", re.I)
_NO_ZH = ("不可以", "不能", "不会", "不需要", "不当然", "无效", "没有区别", "不完全", "不得", "否", "不是",
          "不可", "不必", "不用", "不行", "不予", "不构成", "不适用", "不属于", "一般不", "原则上不", "通常不")
_YES_ZH = ("可以", "能", "有效", "会", "需要", "是", "一般可以", "一般能", "原则上可以", "通常可以", "仍然有效",
           "仍然可以", "仍可", "依然有效", "属于", "构成", "适用", "对", "有")
_YES_NO_EN = re.compile(r"(?:^|[,;:.?]\s*)(?:is|are|can|does|do|may|must|would|will|should|has|have|am|could|"
                        r"was|were|did)\b", re.I)
_YES_NO_ZH = re.compile(r"吗[？?]?\s*$|吗[？?]|能不能|是否|可不可以|有没有|会不会|是不是|算不算|要不要|行不行|一样吗")


def is_yes_no(question: str) -> bool:
    """The question asks for a yes or a no (its answer's first word is checked)."""
    return bool(_YES_NO_EN.search(question.strip()) or _YES_NO_ZH.search(question))
_NEGATION = re.compile(r"\b(not|no|never|cannot|can't|won't|isn't|doesn't|don't|neither|nor|without)\b"
                       r"|不|无|没有|未|禁止|不得", re.I)


def gold_polarity(gold: str) -> str | None:
    """"yes" / "no" when the gold answer opens with one, else None."""
    head = gold.strip().lstrip("（(\"'“")
    if _NO_EN.match(head):
        return "no"
    if _YES_EN.match(head):
        return "yes"
    for words, value in ((_NO_ZH, "no"), (_YES_ZH, "yes")):
        if any(head.startswith(w) for w in words):
            return value
    return None


def answer_polarity(text: str, question: str = "") -> str:
    """The answer's yes or no: its opening word, else whether its first sentence is negated by
    a negation of its own, not one it repeats from the question ("可以不附理由地随时解除合同" to
    "可以不附理由地随时解除合同吗" is a yes)."""
    explicit = gold_polarity(text)
    if explicit:
        return explicit
    first = re.split(r"(?<=[.!?。！？；;])\s*", text.strip(), maxsplit=1)[0]
    asked = " ".join(question.lower().split())
    for m in _NEGATION.finditer(first):
        said = first[m.start():m.end() + 2] if not m.group().isascii() else \
            " ".join(first[m.start():].lower().split()[:2])
        if not asked or said not in asked:
            return "no"
    return "yes"


# --- words ----------------------------------------------------------------------------------------
_STOP = set("""a an the of to in on at by for from with and or but if then than that this these those is are was
were be been being it its as any all each such may must shall will would can could should not no yes under
into out up down over per only also other which who whom what when where why how do does did done has have had
there their them they we our you your us he she his her party parties agreement document section article
clause including include includes e.g i.e etc unless within after before about""".split())


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> set[str]:
    """English content words (stemmed) and Chinese character pairs."""
    text = _clean(text).lower()
    words = {_stem(w) for w in re.findall(r"[a-z][a-z'-]+", text) if w not in _STOP and len(w) > 2}
    cjk = re.sub(r"[^\u4e00-\u9fff]", " ", text)
    pairs = {run[i:i + 2] for run in cjk.split() for i in range(len(run) - 1)}
    return words | pairs


def new_terms(gold: str, question: str) -> set[str]:
    """The gold's words the question did not already say: what an answer must add."""
    return _terms(gold) - _terms(question)


# --- the verdict ----------------------------------------------------------------------------------
COVERAGE = 0.4          # share of the gold's new words an answer without numbers or yes/no must hold
ALL_PARTS = ("comparison", "numeric")   # every figure the gold gives is asked for, not only the first


@dataclass
class Verdict:
    right: bool
    refused: bool
    why: str
    checked: list[str] = field(default_factory=list)     # the facts looked for, in words


def _parts(gold: str, qtype: str) -> list[str]:
    """The gold's main part (comparisons: one per document, "Label: …" after a ';' or a '.'),
    up to the first ';' or '；'."""
    split = r"[;；]|\.\s+(?=[A-Z][^.:;]{0,60}:)|。(?=[^。：]{1,20}：)" if qtype == "comparison" else r"[;；]"
    parts = [p.strip() for p in re.split(split, gold) if p.strip()]
    if not parts:
        return [gold]
    return parts if qtype in ALL_PARTS else parts[:1]


def _part_facts(part: str, asked: list[Fact]) -> list[Fact]:
    """A part's numbers the question did not already give (the first three: one of them must be
    stated); a "Label: …" part (a comparison's document) looks after the label, a
    "fact: explanation" part before the colon when it has one there."""
    def new(text):
        return [f for f in numbers(text) if not has_fact(f, asked)][:3]
    if re.search(r"[:：]", part):
        head, tail = re.split(r"[:：]", part, maxsplit=1)
        return new(head) or new(tail)
    return new(part)


def clauses(text: str) -> set[str]:
    """Clause numbers cited in the text: "22.5", "5.6", "第五百八十六条" → their digits."""
    out = set()
    for m in _CLAUSE.finditer(text):
        out.update(re.findall(r"\d+(?:\.\d+)*", m.group()))
        zh = re.search(r"第([零〇一二三四五六七八九十百千两]+)", m.group())
        if zh and zh_number(zh.group(1)) is not None:
            out.add(str(int(zh_number(zh.group(1)))))
    return out


def judge(question: str, gold: str, answer: str, qtype: str = "", unanswerable: bool = False) -> Verdict:
    """Right or wrong (or a refusal) for one answer. `unanswerable`: the gold is "not stated";
    then right means the answer said the document does not state it."""
    answer = (answer or "").strip()
    if unanswerable or gold.strip().lower() in ("not stated", "the document does not say.", "文件中没有规定。"):
        said = is_refusal(answer)
        return Verdict(said, False, "said not stated" if said else "answered an unanswerable question")
    if is_refusal(answer):
        return Verdict(False, True, "refused: said the document does not state it")
    got = numbers(answer)
    checked, missing = [], []
    polarity = gold_polarity(gold) if is_yes_no(question) else None
    if polarity:
        mine = answer_polarity(answer, question)
        checked.append(f"{polarity}")
        if mine != polarity:
            return Verdict(False, False, f"says {mine}, gold says {polarity}", checked)
    asked = numbers(question)          # what the question already says is no evidence of knowing
    parts = _parts(gold, qtype)
    per_part = [f for f in (_part_facts(part, asked) for part in parts) if f]
    facts = [f for part in per_part for f in part]
    for part in per_part:
        words = " or ".join(f"{f.value:g} {f.kind}" for f in part)
        checked.append(words)
        if not any(has_fact(f, got) for f in part):
            missing.append(words)
    if qtype == "comparison" and facts:         # a document's part without a number: its words
        for part in parts:
            terms = new_terms(part, question) if not _part_facts(part, asked) else set()
            if terms and len(terms & _terms(answer)) / len(terms) < COVERAGE:
                missing.append(f"the words of {part[:30]!r}…")
    if missing:
        return Verdict(False, False, "lacks " + ", ".join(missing), checked)
    if facts or polarity:
        return Verdict(True, False, "states " + ", ".join(checked), checked)
    lead = re.sub(r"\([^)]*\)", " ", _parts(gold, qtype)[0])[:60]     # a clause the answer opens with
    wanted = clauses(lead) if qtype == "cross-reference" else set()
    if wanted:
        have = clauses(answer) | set(re.findall(r"\d+(?:\.\d+)+", answer))
        checked.append("clause " + ", ".join(sorted(wanted)))
        if not wanted & have:
            return Verdict(False, False, "names another clause than " + ", ".join(sorted(wanted)), checked)
    main = " ".join(_parts(gold, qtype))
    terms = new_terms(main, question)
    asked_chars = set(re.sub(r"[^\u4e00-\u9fff]", "", question))
    if terms and all(re.fullmatch(r"[\u4e00-\u9fff]{2}", t) and set(t) <= asked_chars for t in terms):
        # The gold's only "new" pairs join characters the question already has ("以中文版为准" to
        # "中文本和英文本…以哪个版本为准"): it names one of the question's own options, and the
        # answer must name the same one, in the question's words (half of them: "中文本" is
        # "以中文版为准"), and not the other the question offers beside it ("英文" beside "中文").
        chosen = _terms(main) & _terms(question)
        mine = _terms(answer)
        other = {t for t in mine & _terms(question) - _terms(main)    # "英文" beside the gold's "中文"
                 if any(c[1] == t[1] and c[0] != t[0] for c in chosen)}
        checked.append("the option " + ", ".join(sorted(chosen)))
        if chosen and len(chosen & mine) * 2 >= len(chosen) and not other:
            return Verdict(True, False, "names the gold's option: " + ", ".join(sorted(chosen)), checked)
        return Verdict(False, False, "names another option than " + ", ".join(sorted(chosen)), checked)
    if not terms:
        return Verdict(True, False, "nothing checkable beyond the question", checked)
    share = len(terms & _terms(answer)) / len(terms)
    checked.append(f"{share:.0%} of {len(terms)} gold words")
    if share >= COVERAGE:
        return Verdict(True, False, f"holds {share:.0%} of the gold's words", checked)
    return Verdict(False, False, f"holds {share:.0%} of the gold's words (< {COVERAGE:.0%})", checked)
