"""Checks benchmarks/eval/fifth.jsonl: fields, types, composition, gold quotes on their pages, and that the
unanswerable questions' missing facts really are absent from their documents.

Run from the repository root:  python benchmarks/eval/check_fifth.py
The corpus is read from $PAGEWISE_CORPUS, else ../shared/corpus beside the checkout, else /work/shared/corpus.
Exits 1 on any problem.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = HERE / "fifth.jsonl"
sys.path.insert(0, str(HERE))
# The fields, the normalisation and the page texts are the third set's checker's (as in check_fourth.py).
from check_third import FIELDS, HAN, TYPES, corpus_dir, finish, norm, norm_strict, page_texts  # noqa: E402

# Chinese numerals or digits, for the Chinese probes.
N = "[\\d一二三四五六七八九十两百千]+"

# For each unanswerable question (keyed by id): patterns that would state the missing figure, period or
# standard. Each must have no match anywhere in the document (normalised whole text). The comment says
# where the document leaves it instead.
ABSENT: dict[str, list[str]] = {
    # Bonterms DPA 8.2(a): after termination Provider deletes "in accordance with its obligations under
    # the Agreement"; the DPA itself sets no period (the 60 days is in the Cloud Terms, another document).
    "fifth-057": [
        r"(delet|return)\w*[^.]{0,120}\b\d+\s*(days?|months?|weeks?)",
        r"\b\d+\s*(days?|months?|weeks?)[^.]{0,80}(delet|return)",
    ],
    # Bonterms PSA 11.2(a): "Each SOW Term will be for the period specified in the SOW"; no default.
    "fifth-058": [
        r"SOW Term[^.]{0,100}\b\d+\s*(days?|months?|years?)",
        r"\b\d+[- ](day|month|year)s?[^.]{0,60}\bSOW\b",
        r"SOW Term\"?”? (is|will be) (one|two|three|six|twelve)",
    ],
    # Bonterms Cloud Terms 22.7: Provider may modify Support Policy, SLA or Security Measures "With
    # notice to Customer"; no number of days.
    "fifth-059": [
        r"\b\d+\s*days?[^.]{0,100}(Support Policy|SLA|Security Measures)",
        r"(Support Policy|SLA|Security Measures)[^.]{0,100}\b\d+\s*days?",
    ],
    # Common Paper BAA 1.5: "regular assessments"; no frequency.
    "fifth-060": [r"annual|annually|quarterly|once a year|each year|every (year|\d+|six|twelve)", r"assessments?[^.]{0,80}\b\d+\s*(months?|years?)"],
    # Common Paper CSA: no SLA or availability commitment at all (the only % figures are the 50%
    # ownership tests).
    "fifth-061": [r"uptime", r"\d+(\.\d+)?\s?%[^.]{0,40}(of the time|availab|uptime)", r"availab\w*[^.]{0,40}\d+(\.\d+)?\s?%", r"\bSLA\b|[Ss]ervice [Ll]evel"],
    # Common Paper DPA 5.2: audited "against the standards defined in the Security Policy", which is not
    # part of the text.
    "fifth-062": [r"SOC\s?[123]|ISO\s?/?\s?(IEC\s?)?2700\d|SSAE|ISAE|PCI|HITRUST|FedRAMP"],
    # Apache 2.0: no cure period and no termination for breach; only patent licences terminate on
    # patent litigation (s. 3).
    "fifth-063": [r"\bcure\b|\bcured\b|reinstat", r"\b\d+\s*days?\b", r"(thirty|sixty) days"],
    # Common Paper Partnership 6.1: "continues until the End Date", a Cover Page variable.
    "fifth-064": [r"End Date\"?”? (means|is)\b", r"\b\d+\s*(years?|months?)\b", r"\b(one|two|three|five|ten)[- ]years?\b"],
    # Common Paper Software License 4.5(a): "follow the Deletion Procedure", an undefined variable.
    "fifth-065": [
        r"Deletion Procedure\"?”? (means|is)\b",
        r"(remov|delet|uninstall)\w*[^.]{0,80}\b\d+\s*(days?|hours?)",
        r"\b\d+\s*(days?|hours?)[^.]{0,60}(remov|delet|uninstall)",
    ],
    # GPLv3 6(b): "for a price no more than your reasonable cost of physically performing this conveying
    # of source"; no currency figure anywhere.
    "fifth-066": [r"\$|US\$|USD|\bdollars?\b|€|\beuros?\b|£"],
    # PIPL Art. 45: "个人信息处理者应当及时提供"; no number of (working) days.
    "fifth-067": [
        r"(查阅|复制)[^。]{0,60}" + N + r"(个工作日|个?日内|天内|日)",
        r"及时提供[^。]{0,10}" + N,
        N + r"个工作日",
    ],
    # 民法典 Arts. 963-965: the broker's fee is "按照约定", else fixed by the broker's work; no percentage.
    # (Art. 963's "平均负担" is a split between the parties, not a rate.)
    "fifth-068": [r"报酬[^。]{0,60}(百分之|％|%)", r"中介[^。]{0,60}(百分之|％|%)", r"(百分之|％|%)[^。]{0,30}(报酬|中介)"],
    # 电子签名法 Art. 21(4): the certificate must state its "证书有效期"; no maximum. (The "五年" of Art. 24
    # is the record-keeping period after expiry, and the "十年" of Art. 31 a ban on managers: traps.)
    "fifth-069": [r"有效期[^。；]{0,20}" + N + r"(年|个月)", N + r"年[^。；]{0,10}有效期", r"有效期(最长|不得超过|不超过)"],
    # 劳动合同法 Arts. 20, 58, 72, 85: "最低工资标准" is set by the local government; no amount.
    "fifth-070": [r"最低工资标准?[^。；]{0,20}" + N + r"元", N + r"元[^。；]{0,10}最低工资"],
    # 民法典总则 Art. 183: the beneficiary "应当给予适当补偿"; no amount or share.
    "fifth-071": [r"补偿[^。；]{0,30}(百分之|％|%|" + N + r"元|" + N + r"倍)", r"(百分之|％|%)[^。；]{0,20}补偿"],
    # 合同编通则解释 Art. 8: absent agreement the court "综合考虑…等因素酌定"; no percentage. (The 70%/30% of
    # Art. 42 and the 30% of Art. 65 concern other questions: traps.)
    "fifth-072": [r"(预约|本约|认购书)[^。]*(百分之|％|%)", r"(百分之|％|%)[^。]*(预约|本约|认购书)"],
}

# A made-up sentence for each unanswerable question that states the missing answer; every probe of that
# question must match it (after normalisation), which shows the probe would have caught a real answer.
STATES_IT: dict[str, str] = {
    "fifth-057": "Provider will delete all Customer Personal Data within 30 days after termination and return any copies.",
    "fifth-058": "Each SOW Term will be 12 months unless the SOW says otherwise. A 6-month SOW term applies by default. The SOW Term is one year.",
    "fifth-059": "Provider will give at least 30 days notice before it changes the SLA or Security Measures, and the SLA may change on 30 days notice.",
    "fifth-060": "Provider will conduct annual assessments; the assessments will be repeated every 12 months.",
    "fifth-061": "Provider guarantees 99.9% uptime. The service will be 99.5% available each month and availability of 99% of the time; see the Service Level terms and SLA.",
    "fifth-062": "Provider is audited annually against SOC 2 Type II and ISO 27001.",
    "fifth-063": "If You fail to cure a breach within 30 days (thirty days) your rights are not reinstated and the breach is not cured.",
    "fifth-064": "\"End Date\" means the date two years after the Effective Date; the Agreement runs for 3 years, a one-year renewal.",
    "fifth-065": "\"Deletion Procedure\" means Customer will remove all copies within 10 days after termination; within 10 days Customer must uninstall the Software.",
    "fifth-066": "You may charge no more than US$10 (10 dollars, €10 or £10) for the physical copy.",
    "fifth-067": "个人请求查阅、复制其个人信息的，个人信息处理者应当在十五个工作日内提供。个人信息处理者应当及时提供，最迟十日。",
    "fifth-068": "中介人的报酬不得超过成交价款的百分之三。中介费按百分之二收取，报酬以百分之一为限。",
    "fifth-069": "电子签名认证证书的有效期最长为五年；五年为证书有效期；证书有效期最长不超过三年。",
    "fifth-070": "最低工资标准为每月二千元；二千元为最低工资。",
    "fifth-071": "受益人应当给予补偿不少于五千元；按照损失的百分之三十给予补偿。",
    "fifth-072": "预约合同的损失赔偿一般为本约合同价款的百分之二十；按百分之二十计算认购书违约责任。",
}

# The composition the brief asks for: (type, lang) -> count.
EXPECTED = {
    ("lookup", "en"): 22,  # English questions on English documents
    ("lookup", "zh"): 12,  # Chinese questions on Chinese documents (incl. the Chinese text of Mulan PSL v2)
    ("cross-lingual", "en"): 7,  # English questions about a Chinese law
    ("cross-lingual", "zh"): 5,  # Chinese questions about an English contract
    ("definition", "en"): 6,
    ("definition", "zh"): 4,
    ("unanswerable", "en"): 10,
    ("unanswerable", "zh"): 6,
}

BILINGUAL = {"licenses/mulan-psl-v2.pdf"}  # Chinese text pp. 1-2, English pp. 2-4


def doc_langs(doc: str) -> set[str]:
    if doc in BILINGUAL:
        return {"en", "zh"}
    return {"zh"} if doc.startswith("contracts-zh/") else {"en"}


def halves(rows: list[dict]) -> dict[str, str]:
    """Tuning/checking halves as the project's earlier sets are split: within each (language, type),
    ids ordered by SHA-1 and dealt alternately, tuning first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        groups.setdefault((row["lang"], row["type"]), []).append(row["id"])
    half = {}
    for ids in groups.values():
        for i, qid in enumerate(sorted(ids, key=lambda s: hashlib.sha1(s.encode()).hexdigest())):
            half[qid] = "tuning" if i % 2 == 0 else "checking"
    return half


def earlier_questions() -> set[str]:
    """Normalised question texts of the earlier sets, to catch copies."""
    seen = set()
    files = sorted(p for p in HERE.glob("*.jsonl") if p.name != SET.name)
    dev = corpus_dir().parent / "eval" / "dev.jsonl"
    if dev.is_file():
        files.append(dev)
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if isinstance(row.get("question"), str):
                    seen.add(norm(row["question"]).lower())
    return seen


def main() -> int:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    errors: list[str] = []
    notes: list[str] = []
    quotes = strict_ok = 0
    ids = [row["id"] for row in rows]
    if len(set(ids)) != len(ids):
        errors.append("duplicate ids")
    if ids != [f"fifth-{i:03d}" for i in range(1, len(rows) + 1)]:
        errors.append("ids are not fifth-001 … in order")
    earlier = earlier_questions()
    page1_lookups = 0
    for row in rows:
        qid = row["id"]
        if list(row) != FIELDS:
            errors.append(f"{qid}: fields {list(row)}")
            continue
        if row["type"] not in TYPES or row["lang"] not in ("en", "zh"):
            errors.append(f"{qid}: type/lang {row['type']}/{row['lang']}")
        if norm(row["question"]).lower() in earlier:
            errors.append(f"{qid}: question copied from an earlier set")
        question_is_zh = bool(HAN.search(row["question"]))
        if question_is_zh != (row["lang"] == "zh"):
            errors.append(f"{qid}: lang {row['lang']} does not match the question text")
        if not row["docs"] or len(row["docs"]) > 2:
            errors.append(f"{qid}: {len(row['docs'])} documents")
        for doc in row["docs"]:
            if not (corpus_dir() / doc).is_file():
                errors.append(f"{qid}: no such document {doc}")
        # cross-lingual exactly when the question's language is not a language of its documents
        crosses = all(row["lang"] not in doc_langs(d) for d in row["docs"])
        if row["type"] == "cross-lingual":
            want = "contracts-zh" if row["lang"] == "en" else "contracts-en"
            if any(d.split("/")[0] != want for d in row["docs"]):
                errors.append(f"{qid}: cross-lingual {row['lang']} question should be on {want}/*")
        elif row["type"] != "unanswerable" and crosses:
            errors.append(f"{qid}: question language differs from its document's but type is {row['type']}")
        if row["type"] == "unanswerable":
            if crosses:
                errors.append(f"{qid}: this set's unanswerable questions are in their document's language")
            if row["gold"] or row["answer"] != "not stated":
                errors.append(f"{qid}: unanswerable must have gold [] and answer 'not stated'")
            if qid not in ABSENT or qid not in STATES_IT:
                errors.append(f"{qid}: no absence probes or no stating sentence for this unanswerable question")
                continue
            for pattern in ABSENT[qid]:
                if not re.search(pattern, norm(STATES_IT[qid])):
                    errors.append(f"{qid}: probe '{pattern}' does not catch its own stating sentence")
            for doc in row["docs"]:
                whole = norm(" ".join(page_texts(doc)))
                for pattern in ABSENT[qid]:
                    hit = re.search(pattern, whole)
                    if hit:
                        errors.append(f"{qid}: '{pattern}' found in {doc}: {whole[hit.start() - 60 : hit.end() + 60]}")
            continue
        if not row["gold"]:
            errors.append(f"{qid}: answerable question without gold")
        if not row["answer"] or row["answer"] == "not stated":
            errors.append(f"{qid}: answerable question without an answer")
        for gold in row["gold"]:
            if list(gold) != ["doc", "page", "quote"]:
                errors.append(f"{qid}: gold fields {list(gold)}")
                continue
            if gold["doc"] not in row["docs"]:
                errors.append(f"{qid}: gold doc {gold['doc']} not in docs")
            pages = page_texts(gold["doc"])
            if not 1 <= gold["page"] <= len(pages):
                errors.append(f"{qid}: page {gold['page']} out of range")
                continue
            quotes += 1
            if row["type"] == "lookup" and row["lang"] == "en" and gold["page"] == 1:
                page1_lookups += 1
            # the quote must be in the document's language
            quote_is_zh = bool(HAN.search(gold["quote"]))
            if gold["doc"] not in BILINGUAL and quote_is_zh != gold["doc"].startswith("contracts-zh/"):
                errors.append(f"{qid}: quote language does not match {gold['doc']}")
            if not 20 <= len(norm(gold["quote"])) <= 200:
                notes.append(f"{qid}: quote of {len(norm(gold['quote']))} characters (aim is 20-200)")
            text = pages[gold["page"] - 1]
            if norm(gold["quote"]) not in norm(text):
                errors.append(f"{qid}: quote not on {gold['doc']} p{gold['page']}: {gold['quote'][:60]}")
            elif norm_strict(gold["quote"]) in norm_strict(text):
                strict_ok += 1

    composition = Counter((r["type"], r["lang"]) for r in rows)
    if composition != Counter(EXPECTED):
        errors.append(f"composition {dict(composition)} differs from the expected {EXPECTED}")
    unused = sorted(set(ABSENT) - {r["id"] for r in rows if r["type"] == "unanswerable"})
    if unused:
        errors.append(f"absence probes for ids that are not unanswerable questions: {unused}")

    half = halves(rows)
    print(f"{len(rows)} questions in {SET.name}")
    print("by type:", dict(sorted(Counter(r["type"] for r in rows).items())))
    print("by language:", dict(sorted(Counter(r["lang"] for r in rows).items())))
    print("by type and language:", dict(sorted(Counter(f"{r['type']}/{r['lang']}" for r in rows).items())))
    print("documents (first listed):")
    for doc, n in sorted(Counter(r["docs"][0] for r in rows).items()):
        print(f"  {doc}: {n}")
    print(f"English lookups with a page-1 gold: {page1_lookups} of {EXPECTED[('lookup', 'en')]}")
    print(
        "halves:",
        dict(Counter(half.values())),
        "| tuning:",
        " ".join(sorted(q for q, h in half.items() if h == "tuning")),
    )
    print(f"unanswerable absence probes: {sum(r['type'] == 'unanswerable' for r in rows)} questions checked, "
          f"{sum(len(v) for v in ABSENT.values())} patterns, each catches its stating sentence, none found in its document")
    print(f"quotes also found under second-zh's stricter normalisation: {strict_ok} of {quotes}")
    return finish(notes, errors, quotes)

if __name__ == "__main__":
    sys.exit(main())
