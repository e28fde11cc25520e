"""Checks benchmarks/eval/fourth.jsonl: fields, types, gold quotes on their pages, and that the
unanswerable questions' key figures really are absent from their documents.

Run from the repository root:  python benchmarks/eval/check_fourth.py
The corpus is read from $PAGEWISE_CORPUS, else ../shared/corpus beside the checkout, else /work/shared/corpus.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = HERE / "fourth.jsonl"
sys.path.insert(0, str(HERE))
# The fields, the normalisation and the page texts are the third set's checker's.
from check_third import FIELDS, HAN, TYPES, corpus_dir, finish, norm, norm_strict, page_texts  # noqa: E402

# For each unanswerable question (keyed by id): patterns that would state the missing figure, body or
# choice. Each must have no match anywhere in the document (normalised whole text); the comment says
# where the document leaves it instead.
ABSENT: dict[str, list[str]] = {
    # fourth-033 Bonterms Cloud Terms: the SLA is whatever the Cover Page identifies (7.2); the text
    # has only the fallback 99.9% efforts, no service credits.
    "fourth-033": [r"[Ss]ervice [Cc]redits?", r"credit[^.]{0,60}(%|percent)"],
    # fourth-034 Bonterms DPA: transfer mechanisms sit in Schedule 3 (Cross-Border Transfer
    # Mechanisms), which is not part of the text; no SCC module is named.
    "fourth-034": [r"Module\s+(One|Two|Three|Four|[1-4])\b"],
    # fourth-035 Bonterms PSA 17.9: amounts are "specified on the Cover Page or applicable SOW",
    # default is "adequate" coverage; no dollar figure anywhere.
    "fourth-035": [r"\$\s?\d|US\$|USD|\d[\d,]*\s?(dollars|million)"],
    # fourth-036 Common Paper BAA 4.1: "within the Breach Notification Period", a Cover Page variable.
    "fourth-036": [r"Breach Notification Period\"?\s+(means|is)\b", r"(report|notify)[^.]{0,100}within\s+\d+"],
    # fourth-037 Common Paper CSA 1.2: "Technical Support as described in the Order Form"; no times.
    "fourth-037": [r"response time", r"respond\w*[^.]{0,60}within", r"\d+\s*(business\s+)?hours"],
    # fourth-038 Common Paper DPA 3.2(c)(v): SCCs "governed by the laws of Governing Member State",
    # a variable that is never defined in the text.
    "fourth-038": [
        r"Governing Member State\"?\s+means",
        r"laws of (Ireland|Germany|France|the Netherlands|Belgium|Luxembourg|Spain|Italy|Sweden|Austria)",
    ],
    # fourth-039 Common Paper Software License 5.2: "for the Warranty Period", an undefined variable.
    "fourth-039": [
        r"Warranty Period\"?\s+means",
        r"Warranty Period[^.]{0,60}\d+\s*(days|months|years?)",
        r"\d+[-\s]*(day|month|year)s?[^.]{0,40}warrant",
    ],
    # fourth-040 Common Paper Partnership 2.1: Fees are "the amounts described in a Cover Page"; no
    # revenue share or commission rate (the only % is the 50% in "Affiliate").
    "fourth-040": [r"revenue share|commission", r"\d+\s?%\s+of", r"percent of (the )?(revenue|sales|fees|net|gross)"],
    # fourth-041 Apache 2.0 has no governing-law or forum clause (only "applicable law" and the
    # appendix's "governing permissions").
    "fourth-041": [r"governed by", r"[Gg]overning [Ll]aw", r"jurisdiction", r"\bvenue\b", r"\bcourts?\b"],
    # fourth-042 劳动合同法 Art. 66: "不得超过其用工总量的一定比例，具体比例由国务院劳动行政部门规定".
    "fourth-042": [r"用工总量[^。]*(百分之|％|%)", r"劳务派遣[^。]*(百分之|％|%)"],
    # fourth-043 PIPL Art. 54: "应当定期…进行合规审计"; no frequency.
    "fourth-043": [
        r"合规审计[^。]*(每年|每半年|每季度|一次|[\d一二三四五六七八九十两]+年)",
        r"审计[^。；]{0,20}(每年|年度)",
        r"(每年|每半年|每季度|每[\d一二三四五六七八九十两]+年)[^。；]{0,20}合规审计",
    ],
    # fourth-044 民法典总则 Arts. 42-44 set the custodian's duties; no remuneration is mentioned.
    "fourth-044": [r"报酬", r"代管[^。]*(百分之|费用标准)"],
    # fourth-045 民法典合同编 Art. 795 lists "质量保修范围和质量保证期" as contract terms; no period.
    # (The "二年" of Art. 621 is the buyer's notice period in sales, the trap.)
    "fourth-045": [
        r"保修[^。；]{0,30}[\d一二三四五六七八九十]+(年|个月)",
        r"工程[^。]*质量保证期[^。；]{0,20}[\d一二三四五六七八九十]+(年|个月)",
    ],
    # fourth-046 合同编通则解释 Art. 61: the court fixes "寻找替代交易的合理期限" by factors; no figure.
    "fourth-046": [
        r"合理期限[^。；]{0,30}[\d一二三四五六七八九十]+(个月|日|天|周|年)",
        r"替代交易[^。]*[\d一二三四五六七八九十]+个月",
    ],
    # fourth-047 电子签名法 Art. 17(3): "具有与提供电子认证服务相适应的资金"; no capital figure.
    "fourth-047": [r"注册资本", r"资金[^。；]{0,20}万元"],
    # fourth-048 劳动合同法 Arts. 40 and 42 refer to "规定的医疗期" without its length.
    "fourth-048": [
        r"医疗期[^。；]{0,20}[\d一二三四五六七八九十]+(个月|日|天|周|年)",
        r"[\d一二三四五六七八九十]+个月[^。；]{0,10}医疗期",
    ],
}

# The composition the brief asks for: (type, lang) -> count.
EXPECTED = {
    ("cross-lingual", "en"): 10,  # English questions about a Chinese law
    ("cross-lingual", "zh"): 6,  # Chinese questions about an English contract
    ("lookup", "en"): 8,
    ("lookup", "zh"): 8,
    ("unanswerable", "en"): 10,
    ("unanswerable", "zh"): 6,
}


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


def main() -> int:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    errors: list[str] = []
    notes: list[str] = []
    quotes = strict_ok = 0
    ids = [row["id"] for row in rows]
    if len(set(ids)) != len(ids):
        errors.append("duplicate ids")
    for row in rows:
        qid = row["id"]
        if list(row) != FIELDS:
            errors.append(f"{qid}: fields {list(row)}")
        if row["type"] not in TYPES or row["lang"] not in ("en", "zh"):
            errors.append(f"{qid}: type/lang {row['type']}/{row['lang']}")
        question_is_zh = bool(HAN.search(row["question"]))
        if question_is_zh != (row["lang"] == "zh"):
            errors.append(f"{qid}: lang {row['lang']} does not match the question text")
        for doc in row["docs"]:
            if not (corpus_dir() / doc).is_file():
                errors.append(f"{qid}: no such document {doc}")
        doc_langs = {d.split("/")[0] == "contracts-zh" for d in row["docs"]}
        if row["type"] == "cross-lingual":
            # This set's cross-lingual questions are English on a Chinese law or Chinese on an English contract.
            want = "contracts-zh" if row["lang"] == "en" else "contracts-en"
            if any(d.split("/")[0] != want for d in row["docs"]):
                errors.append(f"{qid}: cross-lingual {row['lang']} question should be on {want}/*")
        crosses = doc_langs == {row["lang"] != "zh"}
        if (row["type"] == "cross-lingual") != crosses and row["type"] != "unanswerable":
            errors.append(f"{qid}: cross-lingual type and languages disagree")
        if row["type"] == "unanswerable":
            if row["gold"] or row["answer"] != "not stated":
                errors.append(f"{qid}: unanswerable must have gold [] and answer 'not stated'")
            if qid not in ABSENT:
                errors.append(f"{qid}: no absence probes for this unanswerable question")
                continue
            for doc in row["docs"]:
                whole = norm(" ".join(page_texts(doc)))
                for pattern in ABSENT[qid]:
                    hit = re.search(pattern, whole)
                    if hit:
                        errors.append(f"{qid}: '{pattern}' found in {doc}: {whole[hit.start() - 60 : hit.end() + 60]}")
            continue
        if not row["gold"]:
            errors.append(f"{qid}: answerable question without gold")
        for gold in row["gold"]:
            if gold["doc"] not in row["docs"]:
                errors.append(f"{qid}: gold doc {gold['doc']} not in docs")
            pages = page_texts(gold["doc"])
            if not 1 <= gold["page"] <= len(pages):
                errors.append(f"{qid}: page {gold['page']} out of range")
                continue
            quotes += 1
            if not 20 <= len(norm(gold["quote"])) <= 200:
                notes.append(f"{qid}: quote of {len(norm(gold['quote']))} characters (aim is 20-200)")
            text = pages[gold["page"] - 1]
            if norm(gold["quote"]) not in norm(text):
                errors.append(f"{qid}: quote not on {gold['doc']} p{gold['page']}: {gold['quote'][:60]}")
            elif norm_strict(gold["quote"]) in norm_strict(text):
                strict_ok += 1
        if row["type"] == "comparison" and len({g["doc"] for g in row["gold"]}) < 2:
            errors.append(f"{qid}: comparison needs gold in two documents")

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
    print("documents (first listed):", dict(sorted(Counter(r["docs"][0] for r in rows).items())))
    print(
        "halves:",
        dict(Counter(half.values())),
        "| tuning:",
        " ".join(sorted(q for q, h in half.items() if h == "tuning")),
    )
    print(f"unanswerable absence probes: {sum(r['type'] == 'unanswerable' for r in rows)} questions checked, "
          f"{sum(len(v) for v in ABSENT.values())} patterns, none found")
    print(f"quotes also found under second-zh's stricter normalisation: {strict_ok} of {quotes}")
    return finish(notes, errors, quotes)


if __name__ == "__main__":
    sys.exit(main())
