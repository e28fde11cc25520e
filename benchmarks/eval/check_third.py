"""Checks benchmarks/eval/third.jsonl: fields, types, gold quotes on their pages, and that the
unanswerable questions' key figures really are absent from their documents.

Run from the repository root:  python benchmarks/eval/check_third.py
The corpus is read from $PAGEWISE_CORPUS, else ../shared/corpus beside the checkout, else /work/shared/corpus.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
SET = HERE / "third.jsonl"
TYPES = {"lookup", "definition", "cross-reference", "numeric", "comparison", "cross-lingual", "unanswerable"}
FIELDS = ["id", "docs", "question", "lang", "gold", "answer", "type"]

# CJK ideographs, CJK symbols and punctuation, full-width forms: the README's "CJK character or
# CJK/full-width punctuation". Curly quotes are general punctuation, so spaces beside them stay.
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
HAN = re.compile(f"[{CJK}]")


def corpus_dir() -> Path:
    if os.environ.get("PAGEWISE_CORPUS"):
        return Path(os.environ["PAGEWISE_CORPUS"])
    beside = HERE.parents[2] / "shared" / "corpus"
    return beside if beside.is_dir() else Path("/work/shared/corpus")


def norm(text: str) -> str:
    """The eval README's normalisation: whitespace runs to one space, no space touching CJK, trimmed."""
    text = " ".join(text.split())
    text = re.sub(f"\\s+(?=[{CJK}])", "", text)
    text = re.sub(f"(?<=[{CJK}])\\s+", "", text)
    return text.strip()


def norm_strict(text: str) -> str:
    """second-zh's stricter rule: only whitespace between two CJK ideographs is removed."""
    return re.sub(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", "", " ".join(text.split()))


_pages: dict[str, list[str]] = {}


def page_texts(doc: str) -> list[str]:
    if doc not in _pages:
        with pymupdf.open(corpus_dir() / doc) as pdf:
            _pages[doc] = [page.get_text() for page in pdf]
    return _pages[doc]


# For each unanswerable question: patterns that would state the missing figure or choice. Each must
# have no match anywhere in the document (normalised whole text); the comment says where the
# document leaves it instead.
ABSENT: dict[str, list[str]] = {
    # Governing Law is a Key Term on the Cover Page; no jurisdiction is named.
    "Bonterms Cloud Terms without changes": [r"Delaware|California|New York|England|Wales|laws of the State"],
    # Subprocessor List is "identified or linked to on the DPA Setup Page".
    "approved as subprocessors": [r"Amazon|AWS|Google|Microsoft|Azure|Salesforce|Snowflake|Stripe"],
    # Fees come from the SOW; no rate or currency amount anywhere.
    "hourly or daily rate": [r"\$|USD|per hour|hourly|day rate|daily rate|per day"],
    # General Cap Amount is a Cover Page variable.
    "general liability cap set at": [r"\$\s?\d|\d[\d,]*\s?(USD|dollars)", r"General Cap Amount\"? means"],
    # Non-Renewal Notice Date is a Cover Page variable.
    "non-renewal notice": [
        r"\d+\s+days?\s+(before|prior to)\s+(the\s+)?(end|expir|renewal)",
        r"Non-Renewal Notice Date\"? means",
    ],
    # Annex I(B) on the Cover Page describes the categories.
    "categories of personal data and which groups": [
        r"Categories of (Personal Data|Data Subjects)\"? (means|include|are)"
    ],
    # Cover page reads "Governing Law: [Fill in state]".
    "双向保密协议": [r"laws of the State of (?!Governing Law)", r"Governing Law: (?!\[Fill in state\])"],
    # License Limits are set on the Order Form.
    "users or installations": [
        r"\d+\s+(named\s+)?(users|seats|installations|devices|copies)",
        r"License Limits\"? means[^.]*\d",
    ],
    # Territory is a Cover Page variable.
    "In which countries": [
        r"worldwide|United States only|North America|European Union territory",
        r"Territory\"? means[^.]*(United|world|Europe|America)",
    ],
    # The paper gives no size for the trace cache.
    "trace cache, in megabytes": [
        r"cache[^.]{0,80}\d+\s?(MB|KB|GB|megabytes?|kilobytes?|bytes)\b",
        r"\d+\s?(MB|KB|GB|megabytes?|kilobytes?|bytes)\b[^.]{0,80}cache",
    ],
    # Art. 52 leaves the threshold to the national cyberspace department ("国家网信部门规定数量").
    "必须指定个人信息保护负责人": [
        r"(处理|达到)[^。；]{0,10}[\d一二三四五六七八九十百千万]+万?(人|名)",
        r"负责人[^。；]*(百万|万人)",
    ],
    # Art. 38 only refers to the standard contract made by the national cyberspace department.
    "标准合同": [r"标准合同[^。]*(包括|载明|下列条款|应当约定以下)"],
    # Art. 23 requires monthly compensation but sets no amount.
    "竞业限制，按劳动合同法": [r"竞业限制[^。；]*(百分之|％|%|\d+元|[一二三四五六七八九十百千]+元|最低|不得低于)"],
    # Art. 31 refers to "国家有关规定" for overtime pay; no rate.
    "加班费按劳动合同法": [r"加班费[^。；]*(百分之|％|%|倍)", r"延长工作时间[^。；]*(百分之|％|%|倍)"],
    # Art. 58 leaves the conditions for founding a legal person to other laws; no capital figure.
    "最低要有多少注册资本": [r"注册资本", r"[\d一二三四五六七八九十百千万]+万?元"],
    # Art. 680 bans usury and refers to "国家有关规定"; no rate.
    "maximum annual interest rate": [r"利率[^。；]*(百分之|％|%|倍|不得超过[\d一二三四五六七八九十])", r"年利率"],
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


def finish(notes: list[str], errors: list[str], quotes: int) -> int:
    """The notes, then the problems (exit 1) or that every quote was found (exit 0)."""
    for note in notes:
        print("note: " + note)
    if errors:
        print(f"{len(errors)} problems:")
        for err in errors:
            print("  " + err)
        return 1
    print(f"all {quotes} quotes found on their pages")
    return 0


def main() -> int:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    errors: list[str] = []
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
        doc_langs = {d.split("/")[0] == "contracts-zh" for d in row["docs"]}
        crosses = doc_langs == {row["lang"] != "zh"}
        if (row["type"] == "cross-lingual") != crosses and row["type"] != "unanswerable":
            errors.append(f"{qid}: cross-lingual type and languages disagree")
        if row["type"] == "unanswerable":
            if row["gold"] or row["answer"] != "not stated":
                errors.append(f"{qid}: unanswerable must have gold [] and answer 'not stated'")
            probes = [pats for key, pats in ABSENT.items() if key in row["question"]]
            if len(probes) != 1:
                errors.append(f"{qid}: {len(probes)} absence probes match the question")
                continue
            for doc in row["docs"]:
                whole = norm(" ".join(page_texts(doc)))
                for pattern in probes[0]:
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
            text = pages[gold["page"] - 1]
            if norm(gold["quote"]) not in norm(text):
                errors.append(f"{qid}: quote not on {gold['doc']} p{gold['page']}: {gold['quote'][:60]}")
            elif norm_strict(gold["quote"]) in norm_strict(text):
                strict_ok += 1
        if row["type"] == "comparison" and len({g["doc"] for g in row["gold"]}) < 2:
            errors.append(f"{qid}: comparison needs gold in two documents")

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
    print(f"unanswerable absence probes: {sum(r['type'] == 'unanswerable' for r in rows)} questions checked")
    print(f"quotes also found under second-zh's stricter normalisation: {strict_ok} of {quotes}")
    return finish([], errors, quotes)


if __name__ == "__main__":
    sys.exit(main())
