"""What a question asks for when it asks for a value — a figure, a period, a share, a sum, a
place — and whether a quote holds one of that kind. The evidence's "not addressed" check
(addressed.py) asks it of the card about the question: a near miss is a clause on the topic that
sets no such value, often beside a clause that sets another one ("30 days" of a cure period for
a question on the non-renewal notice)."""
from __future__ import annotations

import re

_NUM_ZH = "一二三四五六七八九十百千万两半〇零"
_UNITS_EN = r"(business |calendar |working |consecutive )?(days?|weeks?|months?|years?|hours?|minutes?|quarters?)"
_WORDS = (r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|forty-five"
          r"|sixty|ninety|hundred|several")

# Where a rule is, which version, which year — and the figures the question itself gives (the
# "99.9 %" a question on the service credit names): none of these answers a question for a value.
_NOT_FIGURE = re.compile(
    r"§+\s*[\d.()a-z]+"
    r"|\b(sections?|clauses?|articles?|arts?\.|s\.|ss\.|schedules?|tables?|annex(es)?|exhibits?|appendix|paragraphs?"
    r"|version|v\.|recitals?|items?|decision|regulation|directive)\s*\(?\d+(\.\d+)*(\([a-z0-9]+\))*"
    r"|^\s*(\(?\d+[.)]|\d+\.\d+(\.\d+)*\.?)(?=\s)|(?<![\d.])\d+\.\d+\.\d+(\.\d+)*|/\d+(\.\d+)*|\b\d+/\d+\b"
    r"|\b(19|20)\d\d\b|\b\d{1,2}\s+(January|February|March|April|May|June|July|August|September|October|November"
    r"|December)\b|(19|20)\d\d年(\d{1,2}月(\d{1,2}日)?)?|第[\d.]+条",
    re.IGNORECASE)
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_NUMERALS_ZH = re.compile(rf"[{_NUM_ZH}]{{2,}}|[{_NUM_ZH}](?=个|[日天月年周倍元%])")

# A figure of any kind: a number (not "one party"), a share in words, a frequency, a reference rate.
_ANY = re.compile(
    rf"\d|分之|\b(LPR|prime rate|base rate|SOFR|LIBOR)\b|报价利率|基准利率|[{_NUM_ZH}]+\s*(个)?(元|倍|日|天|年|月|周|小时|%|人|次|份|名)"
    rf"|\b({_WORDS})\b|\bone\s+(\(\d+\)\s*)?{_UNITS_EN}\b|\b(twice|double|half)\b"
    r"|\b(unanimous(ly)?|majority|annual(ly)?|yearly|monthly|quarterly|weekly|daily)\b"
    r"|\b(each|every) (year|month|quarter|week|day)\b|全体|过半数|半数|一致同意|每年|每月|每季度|每周|每日|每天",
    re.IGNORECASE)

# A question asking for a figure or a period at all. Not a bare 期限 ("固定期限劳动合同" names a
# contract) nor 几个 alone ("我们几个人开的…" asks nothing of a number).
_ASKS_ANY = re.compile(
    r"\b(what|which) (percentage|percent|amount|rate|fee|number|minimum|maximum|cap|limit)\b"
    r"|\bhow (much|many|long|soon|quickly|often|late|early|far in advance)\b|\bwithin what\b"
    r"|\bwhat (notice )?(period|deadline)\b|\bby when\b"
    r"|多少|多长|多久|几[天年日次倍周成]|几个(月|工作日|小时|星期|季度)|比例|税率|金额|上限|百分之几", re.IGNORECASE)

# Kinds: (what asks for one, what holds one). A question may ask for several kinds; each must be held.
_KINDS = {
    # A counted period ("how many days"): a number of days, weeks, months or years.
    "period": (re.compile(r"\bhow many " + _UNITS_EN + r"\b|\bhow much (notice|time|warning)\b|\bhow far in advance\b"
                          r"|几[天年日周]|几个(月|工作日|小时|星期|季度)|多少(个)?(天|日|年|月|小时|工作日|星期)|提前多少",
                          re.IGNORECASE),
               re.compile(rf"(\d+|\b({_WORDS}|one)\b)\s*(\(\d+\)\s*)?[- ]?{_UNITS_EN}\b"
                          rf"|[\d{_NUM_ZH}]+\s*(个)?(日|天|月|年|周|星期|小时|工作日|季度)"
                          r"|\b(annual(ly)?|yearly|monthly|quarterly|weekly|daily|perpetual(ly)?|in perpetuity|indefinite(ly)?)\b"
                          r"|永久|无固定期限|每年|每月|每周|每日|每天", re.IGNORECASE)),
    # Advance notice ("how many days' notice", "提前多少天"): a period said as notice or as coming before —
    # not the "30 days after notice of a new Subprocessor" to object, nor "within 10 days" to meet.
    "notice": (re.compile(r"\bhow (many|much) (business |calendar |working )?(days?|weeks?|months?)?['’]?\s*"
                          r"((advance|prior|written) )*(notice|warning)\b|\bhow far in advance\b"
                          r"|提前多少|提前几|提前多久|多少(天|日)前|几天前", re.IGNORECASE),
               re.compile(rf"\d+\)?\s*{_UNITS_EN}['’]?\s*((prior|advance|written) )*(notice|warning)"
                          rf"|(\d+\)?|\b({_WORDS}|one))\s*{_UNITS_EN}\s*(before|prior to|in advance|or more before)"
                          r"|\bnotice of (at least )?(\w+ )?\(?\d+|\b(prior|advance) notice[^.;]{0,40}?\b(is|of|shall be|will be)\s+"
                          r"(at least\s+)?\(?(\d+|\w+ \(\d+\))"
                          rf"|提前[\d{_NUM_ZH}]+\s*(个)?(日|天|月|周|工作日)|[\d{_NUM_ZH}]+\s*(个)?(日|天|月|工作日)(以)?前",
                          re.IGNORECASE)),
    "percent": (re.compile(r"\b(what|which) (percentage|percent|rate|share|portion|fraction)\b|\bpercentage\b"
                           r"|\b(interest|tax|annual) rate\b|百分之多少|百分之几|几成|比例是多少|税率|利率|费率", re.IGNORECASE),
                re.compile(r"%|\bper ?cent\b|百分之|[一二三四五六七八九十百千]分之|\d+(\.\d+)?\s*倍|\btimes\b|\b(twice|double|half)\b"
                           r"|\b(LPR|prime rate|base rate|SOFR|LIBOR)\b|报价利率|基准利率", re.IGNORECASE)),
    "money": (re.compile(r"\b(what|which) (is|are) the ([a-z]+ ){0,2}(fee|price|rent|salary|wage)s?\b"
                         r"|\b(dollar figure|dollar amount|how many dollars|in (us |u\.s\. )?dollars|monetary|hourly|daily rate"
                         r"|what (is the )?price|how much (money|does it cost))\b|多少钱|多少元|多少万|金额是多少|注册资本|收费标准"
                         r"|多少经济补偿", re.IGNORECASE),
              re.compile(r"[$€£¥]|\b(usd|eur|gbp|rmb|dollars?|euros?)\b|元|%|百分之|(month|months)['’]?\s*(of\s+)?"
                         r"(fees|salary|wages|pay)|个月(的)?(工资|报酬)|\bfees (paid|payable)\b", re.IGNORECASE)),
    # A place: whose law governs, which courts, which country ("the laws of the State of Delaware",
    # "中华人民共和国境内"); the near miss is a governing-law clause that names no place ("the Governing
    # Law governs this Agreement", the place left to the cover page).
    "place": (re.compile(r"\bwhich (state|country|countries|jurisdiction|jurisdictions|court|courts|city|venue|region)\b"
                         r"|\b(state|country)['’]s laws?\b|\bwhose laws?\b|\bwhat law governs\b|\blaws? of which\b"
                         r"|\bwhere (must|should|will|would|can|may|is|are|do|does)\b[^?]*\b(sued?|brought|heard|litigated"
                         r"|arbitrated|resolved|filed|stored|hosted|located)\b"
                         r"|哪个(州|国家|地区|法院|城市)|哪国|哪一国|哪里的法院|哪个地方的法律|适用哪", re.IGNORECASE),
              re.compile(r"\b(laws?|courts?) (of|in|located in|sitting in|seated in)\s+(the\s+)?(state of\s+|province of\s+)?[A-Z][a-z]"
                         r"|\b(State|Commonwealth|Province|Republic|Kingdom) of [A-Z]"
                         r"|\b(jurisdiction|place|country|state|courts?|venue) (where|in which)\b|\bprincipal place of business\b"
                         r"|\b(United States|U\.S\.|USA|US|EU|European Union|EEA|United Kingdom|UK|England|Wales|Ireland|Delaware"
                         r"|California|New York|Switzerland|Singapore|China|Hong Kong)\b"
                         r"|中华人民共和国|中国|境内|境外|美国|欧盟|英国|香港|仲裁委员会|人民法院")),   # case kept: "US", not "us"
    "size": (re.compile(r"\b(megabytes?|gigabytes?|kilobytes?|mb|gb|kb)\b", re.IGNORECASE),
             re.compile(r"\d\s*(mb|gb|kb|megabytes?|gigabytes?|kilobytes?|bytes)\b", re.IGNORECASE)),
}


def held(quote: str, question: str) -> str:
    """The quote without what is not a figure for this question: references, versions, years,
    and the question's own figures."""
    text = _NOT_FIGURE.sub(" ", quote)
    for figure in set(_DIGITS.findall(question)):
        text = re.sub(rf"(?<![\d.]){re.escape(figure)}(?![\d]|\.\d)\s*(%|per ?cent\b|[a-z]+|[日天月年元倍])?", " ", text,
                      flags=re.IGNORECASE)
    for figure in set(_NUMERALS_ZH.findall(question)):
        text = re.sub(rf"(?<![{_NUM_ZH}]){figure}(?![{_NUM_ZH}])\s*(个)?[日天月年周倍元%]?", " ", text)
    return text


def value_missing(question: str, quotes: list[str]) -> bool:
    """The question asks for a value (of a kind) that none of `quotes` holds."""
    texts = [held(q, question) for q in quotes]
    if _ASKS_ANY.search(question) and not any(_ANY.search(t) for t in texts):
        return True
    return any(ask.search(question) and not any(hold.search(t) for t in texts) for ask, hold in _KINDS.values())
