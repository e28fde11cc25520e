"""Checks benchmarks/eval/sixth.jsonl: fields, types, composition, gold quotes on their pages, and that the
unanswerable (near-miss) questions' missing facts really are absent from their documents.

Run from the repository root:  python benchmarks/eval/check_sixth.py
The corpus is read from $PAGEWISE_CORPUS, else ../shared/corpus beside the checkout, else /work/shared/corpus.
Exits 1 on any problem. (check_fifth.py adapted to this set.)
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = HERE / "sixth.jsonl"
PREFIX = "sixth"
sys.path.insert(0, str(HERE))
# The fields, the normalisation and the page texts are the third set's checker's (as in check_fourth/fifth.py).
from check_third import FIELDS, HAN, TYPES, corpus_dir, finish, norm, norm_strict, page_texts  # noqa: E402
# The bilingual licence, its languages and the halves are the fifth set's checker's.
from check_fifth import BILINGUAL, doc_langs, halves  # noqa: E402

# Chinese numerals or digits, for the Chinese probes.
N = "[\\d一二三四五六七八九十两百千]+"

# For each unanswerable question (keyed by id): patterns that would state the missing figure, period, name or
# rule. Each must have no match anywhere in the document (normalised whole text). The comment says where the
# document leaves it instead.
ABSENT: dict[str, list[str]] = {
    # Bonterms Cloud 12.1/14.1: fees are "described in the Order", renewal is automatic; nothing on price
    # increases. (The only % figures are the 1.5% late charge, 99.9% SLA fallback and 50% ownership.)
    "sixth-051": [
        r"(increase|raise|uplift|escalat)\w*[^.]{0,80}(fee|price|rate)",
        r"(fee|price|rate)s?[^.]{0,80}(increase|uplift|escalat|CPI)",
        r"\b\d+(\.\d+)?\s?%[^.]{0,60}(renew|fee|price)",
    ],
    # Bonterms Cloud: no hosting or data location at all (5.2 points to Security Measures on the Cover Page;
    # 22.14's "located in ... a country subject to a U.S. government embargo" is about the parties).
    "sixth-052": [
        r"Customer Data[^.]{0,80}(stored|hosted|located|reside)",
        r"data (residency|localization|localisation|cent(er|re)s?)",
        r"(stored|hosted|located)[^.]{0,40}(United States|\bEU\b|European|EEA)",
    ],
    # Bonterms DPA 6: Provider "will assist Customer" with a DPIA; no word on cost (only the Audit of 9.3 is
    # "at Customer's expense").
    "sixth-053": [
        r"(impact|risk) assessment[^.]{0,200}(expense|cost|fee|charge)",
        r"(expense|cost|fee|charge)s?[^.]{0,150}(impact|risk) assessment",
    ],
    # Bonterms DPA 8.2(c): retention "in accordance with its standard backup or record retention policies";
    # no period. (The 60 days after a request is in the Cloud Terms, another document.)
    "sixth-054": [
        r"(backup|retain|retention)\w*[^.]{0,150}\b\d+\s*(days?|months?|years?)",
        r"\b\d+\s*(days?|months?|years?)[^.]{0,100}(backup|retain|retention)",
        r"(backup|retain|retention)\w*[^.]{0,150}\b(thirty|sixty|ninety|one|two|three|six|twelve)\s*(days?|months?|years?)",
    ],
    # Bonterms PSA: no suspension right for the Provider at all (only 1.5% late charge, 10.3, and termination
    # for uncured breach, 11.3). The Cloud Terms' 30-day Suspension Event is in another document.
    "sixth-055": [
        r"[Ss]uspen",
        r"(stop|halt|pause|cease)\w*[^.]{0,40}(work|Services)[^.]{0,80}(overdue|late|unpaid|non-?payment)",
    ],
    # Bonterms PSA 4.1: each SOW names the Project Lead and Escalation Lead; nothing on replacing them or on
    # key personnel.
    "sixth-056": [
        r"(replac|substitut|swap|reassign)\w*[^.]{0,60}(Project Lead|Escalation Lead|personnel)",
        r"(Project Lead|Escalation Lead|personnel)[^.]{0,60}(replac|substitut|swap|reassign)",
        r"[Kk]ey personnel",
    ],
    # Common Paper CSA 2.2: suspension "with or without notice", Provider "will try to inform Customer before
    # suspending ... when practical"; no period (the 30 days is the overdue balance that triggers it).
    "sixth-057": [
        r"\b\d+\s*(business )?(days?|hours?)['’]?\s*(prior |advance |written )?notice[^.]{0,80}suspen",
        r"suspen\w*[^.]{0,80}\b\d+\s*(business )?(days?|hours?)['’]?\s*(prior |advance |written )?notice",
        r"(notice|inform)\w*[^.]{0,40}\b\d+\s*(days?|hours?)[^.]{0,20}before[^.]{0,20}suspen",
    ],
    # Common Paper CSA: no backup obligation; "backup" only in 5.6(b) (retention policies for Confidential
    # Information).
    "sixth-058": [
        r"back(ed)?[- ]?ups?\b[^.]{0,80}(daily|weekly|hourly|nightly|every|\d+\s*(hours?|days?))",
        r"(daily|weekly|hourly|nightly)\s+back",
        r"back\s?up[^.]{0,40}(Customer Content|data)[^.]{0,40}(daily|every|at least)",
    ],
    # Common Paper DPA 6.1: Provider "will assist Customer in fulfilling the request according to the
    # Applicable Data Protection Law"; no days. (10 business days / 30 days concern subprocessor changes.)
    "sixth-059": [
        r"(delet|opt out|data subject)[^.]{0,150}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,100}(data subject|deletion request|opt out)",
    ],
    # Common Paper MNDA 6(b): destroy or return "promptly after the Disclosing Party's written request".
    "sixth-060": [
        r"(destroy|return)\w*[^.]{0,120}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,80}(destroy|destruction|return)",
        r"(destroy|return)\w*[^.]{0,120}\b(five|ten|fifteen|thirty)\s*(business )?days?",
    ],
    # Common Paper MNDA: no non-solicitation or no-hire clause anywhere.
    "sixth-061": [r"[Ss]olicit", r"\b[Hh]ir(e|es|ing)\b", r"[Pp]oach", r"[Rr]ecruit"],
    # Common Paper Software License 1.6: install Updates "as soon as practicable after receipt"; 5.3(c):
    # "within a reasonable amount of time". No number.
    "sixth-062": [
        r"(install|Update)\w*[^.]{0,100}\b\d+\s*(days?|hours?|weeks?)",
        r"\b\d+\s*(days?|hours?|weeks?)[^.]{0,60}(install|Update)",
        r"(install|Update)\w*[^.]{0,100}\b(five|seven|ten|fifteen|thirty|sixty)\s*(days?|weeks?)",
    ],
    # Common Paper BAA 1.3: "giving training to Provider's workforce"; no frequency.
    "sixth-063": [
        r"training[^.]{0,100}(annual|yearly|every|once a|each year|\b\d+\s*(months?|years?|hours?))",
        r"(annual|yearly|quarterly)\w*[^.]{0,40}training",
    ],
    # Common Paper BAA 4.3: reimburse "costs reasonably associated with a Security Incident"; no cap or
    # amount in the BAA (no $ figure anywhere).
    "sixth-064": [
        r"reimburs\w*[^.]{0,150}\b(cap|capped|not exceed|limit(ed)?|maximum|up to)\b",
        r"\$\s?\d|\bUSD\b|\bdollars?\b",
    ],
    # Common Paper Partnership 2.1(b): pay "according to the Payment Schedule", a Cover Page variable.
    "sixth-065": [
        r"(invoice|bill|payment)[^.]{0,80}\b\d+\s*days?",
        r"\b\d+\s*days?[^.]{0,60}(invoice|\bbill\b|payment)",
        r"Payment Schedule\"?”? (means|is)\b",
    ],
    # Apache 2.0 s. 9: "You may choose to offer, and charge a fee for, acceptance of support, warranty,
    # indemnity ..."; no amount or ceiling.
    "sixth-066": [
        r"\$|US\$|USD|\bdollars?\b|€|\beuros?\b|£",
        r"fee[^.]{0,80}(not exceed|no more than|maximum|at most|up to|capped)",
    ],
    # GPLv3 s. 14: "If the Program specifies that a proxy can decide ..."; the licence names no proxy.
    "sixth-067": [
        r"proxy (is|shall be|means|will be)\b",
        r"(designat|appoint|nam)\w*[^.]{0,60}proxy",
        r"proxy[^.]{0,40}(Free Software Foundation|FSF|copyright holder)",
    ],
    # MPL 2.0 s. 3.2(a): source "by reasonable means in a timely manner"; no duration (GPLv3's three-year
    # written offer is in another document).
    "sixth-068": [r"\b\d+\s*years?\b", r"\b(one|two|three|five|ten)[- ]years?\b", r"[Ss]ource[^.]{0,120}(for as long as|at least)"],
    # 劳动合同法第三十条: 拖欠劳动报酬的，"人民法院应当依法发出支付令"，无天数（期限在民事诉讼法，另一部法律）。
    "sixth-069": [r"支付令[^。]{0,40}" + N + r"(日|天)", N + r"(日|天)内[^。]{0,20}(发出)?支付令"],
    # 劳动合同法第四十三条: "应当事先将理由通知工会"，无天数。(第四十一条裁员"提前三十日向工会或者全体职工说明情况"
    # 是另一回事，陷阱。)
    "sixth-070": [
        r"提前" + N + r"(日|天)[^。，]{0,6}通知工会",
        r"通知工会[^。]{0,20}" + N + r"(日|天)",
        r"事先[^。]{0,10}" + N + r"(日|天)[^。]{0,10}通知工会",
    ],
    # 个人信息保护法第五十七条: "应当立即采取补救措施，并通知"，无小时数。
    "sixth-071": [N + r"个?小时", r"通知[^。]{0,40}" + N + r"(日|天)内", N + r"(日|天)内[^。]{0,30}通知"],
    # 个人信息保护法第十九条: 保存期限为"实现处理目的所必要的最短时间"，无年数。(第五十六条"至少保存三年"是评估报告，
    # 陷阱。)
    "sixth-072": [
        r"保存期限[^。]{0,30}" + N + r"年",
        r"个人信息[^。]{0,20}保存[^。]{0,10}(不得超过|最长|最多)",
        r"保存[^。]{0,6}(不得超过|最长为?)" + N + r"年",
    ],
    # 民法典第一百六十五条: 授权委托书"应当载明……权限和期限"，未规定未载明时的默认期限。(第一百七十一条的"三十日内
    # 予以追认"是催告追认期，陷阱。)
    "sixth-073": [
        r"(代理权|授权委托书|代理期限)[^。]{0,40}" + N + r"(年|个月|日)",
        r"(未|没有)(载明|写明|约定)[^。]{0,20}期限[^。]{0,30}" + N + r"(年|个月|日)",
    ],
    # 民法典第七十条: 清算义务人"应当及时组成清算组进行清算"，无天数。
    "sixth-074": [r"清算组[^。]{0,30}" + N + r"(日|天)", N + r"(日|天)内[^。]{0,20}(组成|成立)清算组", r"解散[^。]{0,30}" + N + r"(日|天)内"],
    # 民法典第八百一十六条: 在约定的期限内办理退票，无退票费比例或金额。
    "sixth-075": [r"退票[^。]{0,40}(百分之|％|%|" + N + r"元)", r"退票费", r"(百分之|％|%)[^。]{0,20}退票"],
    # 民法典第八百二十三条: 承运人对旅客伤亡承担赔偿责任，无限额。(第八百四十二条的"责任限额"指多式联运货物，
    # 适用其他法律，陷阱。)
    "sixth-076": [
        r"(伤亡|旅客)[^。]{0,40}(赔偿)?限额",
        r"赔偿[^。]{0,30}(最高|不超过|不得超过)[^。]{0,10}" + N + r"万?元",
        N + r"万?元[^。]{0,20}(赔偿|伤亡)",
    ],
    # 合同编通则解释第五十三条: "约定的异议期限或者其他合理期限"，无天数。
    "sixth-077": [r"异议[^。]{0,30}" + N + r"(日|天|个月)", N + r"(日|天)内[^。]{0,20}(提出)?异议"],
    # 合同编通则解释第十二条: 报批义务只说不履行的后果，无期限。
    "sixth-078": [r"报批[^。]{0,40}" + N + r"(日|天|个月)", N + r"(日|天|个月)内[^。]{0,20}(报批|申请批准)"],
    # 电子签名法第六条: 只列数据电文满足文件保存要求的条件，无年限。(第二十四条"证书失效后五年"是认证机构保存认证
    # 信息，陷阱。)
    "sixth-079": [r"(数据电文|文件保存)[^。；]{0,40}" + N + r"年", r"文件保存要求[^。]{0,60}" + N + r"年"],
    # 电子签名法第三十二条: 伪造、冒用、盗用他人电子签名的追究刑事、民事责任，无罚款。(第二十九至三十一条的罚款针对
    # 认证服务，陷阱。)
    "sixth-080": [r"(伪造|冒用|盗用)[^。]{0,60}(罚款|" + N + r"万?元)", r"(罚款|" + N + r"万?元)[^。]{0,40}(伪造|冒用|盗用)"],
}

# A made-up sentence for each unanswerable question that states the missing answer; every probe of that
# question must match it (after normalisation), which shows the probe would have caught a real answer.
STATES_IT: dict[str, str] = {
    "sixth-051": "At renewal the Provider may increase the fees by up to 5%; fees will rise by 3% per year (CPI uplift).",
    "sixth-052": "Customer Data will be stored in the United States; the Provider hosts it in data centers located in the European Union (data residency).",
    "sixth-053": "Provider will assist with any data protection impact assessment at Customer's expense; the costs of the impact assessment are borne by Customer.",
    "sixth-054": "Provider may retain Customer Personal Data in backups for 90 days; after 90 days backups are deleted; backup retention is limited to ninety days.",
    "sixth-055": "If payments are 30 days overdue, Provider may suspend the Services; Provider may stop work on the Services while invoices are unpaid.",
    "sixth-056": "Provider will give 10 days' notice before it replaces its Project Lead; the Project Lead may be swapped only with consent; changes to key personnel need approval.",
    "sixth-057": "Provider will give Customer 10 days' notice before it suspends the account; suspension requires 5 days prior notice; Provider must inform Customer 10 days before suspending.",
    "sixth-058": "Provider will back up Customer Content daily; it performs nightly backups.",
    "sixth-059": "Provider will assist Customer with a data subject's deletion request within 5 business days; within 10 days of a data subject request Provider will respond.",
    "sixth-060": "Receiving Party will destroy all Confidential Information within 10 days; within 10 days after the request it must return it; destroy it within thirty days.",
    "sixth-061": "Neither party will solicit, hire, recruit or poach the other party's employees.",
    "sixth-062": "Customer will install all Updates within 30 days of release; 14 days after an Update is released it must be applied; install Updates within thirty days.",
    "sixth-063": "Provider will give annual training to its workforce; training must be repeated every 12 months.",
    "sixth-064": "Provider's reimbursement of Security Incident costs is capped at $500,000 and will not exceed 500,000 dollars.",
    "sixth-065": "Fees are due within 30 days of the invoice date; 30 days after the invoice the payment is late. \"Payment Schedule\" means net 30.",
    "sixth-066": "You may charge a fee of no more than $100 (100 US dollars) for warranty.",
    "sixth-067": "The proxy is the Free Software Foundation; the FSF is designated as proxy.",
    "sixth-068": "You must offer the Source Code Form for at least 3 years (three years) after distribution.",
    "sixth-069": "劳动者申请支付令的，人民法院应当在十五日内发出支付令。",
    "sixth-070": "用人单位单方解除劳动合同，应当提前十五日通知工会；通知工会的期限为十五日；应当事先十五日将理由通知工会。",
    "sixth-071": "发生个人信息泄露的，应当在七十二小时内通知履行个人信息保护职责的部门；最迟三日内通知个人。",
    "sixth-072": "个人信息的保存期限最长为三年；个人信息保存不得超过五年。",
    "sixth-073": "授权委托书未载明期限的，代理权有效期为一年；代理期限自授权之日起一年。",
    "sixth-074": "法人解散的，清算义务人应当在十五日内组成清算组；清算组应当自解散之日起十五日内成立。",
    "sixth-075": "旅客退票的，承运人可以收取票款百分之二十的退票费；按百分之五收取退票。",
    "sixth-076": "承运人对旅客伤亡的赔偿限额为每人四十万元；赔偿最高不超过四十万元；四十万元为伤亡赔偿上限。",
    "sixth-077": "对方应当自收到解除通知之日起十五日内提出异议，异议期限为十五日。",
    "sixth-078": "负有报批义务的当事人应当在合同成立后三十日内报批；三十日内申请批准。",
    "sixth-079": "数据电文应当保存五年；满足文件保存要求的期限为五年。",
    "sixth-080": "冒用他人电子签名的，处五万元以下罚款；对伪造者罚款十万元。",
}

# The composition the brief asks for: (type, lang) -> count.
EXPECTED = {
    ("lookup", "en"): 20,  # English questions on English contracts and licences
    ("lookup", "zh"): 10,  # Chinese questions on the Chinese laws
    ("cross-lingual", "en"): 6,  # English questions about a Chinese law
    ("cross-lingual", "zh"): 6,  # Chinese questions about an English contract or licence
    ("definition", "en"): 5,
    ("definition", "zh"): 3,
    ("unanswerable", "en"): 18,  # English documents
    ("unanswerable", "zh"): 12,  # Chinese laws
}
# Ids run in blocks by type and language, in this order.
BLOCKS = [
    ("lookup", "en"), ("lookup", "zh"), ("cross-lingual", "en"), ("cross-lingual", "zh"),
    ("definition", "en"), ("definition", "zh"), ("unanswerable", "en"), ("unanswerable", "zh"),
]
# The earlier question sets whose question texts must not be repeated (dev lives beside the corpus).
EARLIER = ["second-en.jsonl", "second-zh.jsonl", "third.jsonl", "fourth.jsonl", "fifth.jsonl"]

ENGLISH_DIRS = ("contracts-en/", "licenses/")


def earlier_questions(errors: list[str], earlier: list[str] = EARLIER) -> set[str]:
    """Normalised question texts of dev.jsonl and the `earlier` sets, to catch copies."""
    seen = set()
    files = [HERE / name for name in earlier] + [corpus_dir().parent / "eval" / "dev.jsonl"]
    for path in files:
        if not path.is_file():
            errors.append(f"earlier set {path} not found, so copies from it cannot be checked")
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if isinstance(row.get("question"), str):
                    seen.add(norm(row["question"]).lower())
    return seen


def absence_errors(qid: str, docs: list[str], probes: list[str] | None, stating: str | None) -> list[str]:
    """An unanswerable question's absence probes: each catches the sentence that would state the
    value, and none matches anywhere in its documents."""
    if not probes or not stating:
        return [f"{qid}: no absence probes or no stating sentence for this unanswerable question"]
    errors = [f"{qid}: probe '{p}' does not catch its own stating sentence" for p in probes if not re.search(p, norm(stating))]
    for doc in docs:
        whole = norm(" ".join(page_texts(doc)))
        for pattern in probes:
            hit = re.search(pattern, whole)
            if hit:
                errors.append(f"{qid}: '{pattern}' found in {doc}: {whole[hit.start() - 60 : hit.end() + 60]}")
    return errors


def main() -> int:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    errors: list[str] = []
    notes: list[str] = []
    quotes = strict_ok = 0
    ids = [row["id"] for row in rows]
    if len(set(ids)) != len(ids):
        errors.append("duplicate ids")
    if ids != [f"{PREFIX}-{i:03d}" for i in range(1, len(rows) + 1)]:
        errors.append(f"ids are not {PREFIX}-001 … in order")
    order = [(r.get("type"), r.get("lang")) for r in rows]
    if order != [block for block in BLOCKS for _ in range(EXPECTED[block])]:
        errors.append("ids are not in blocks by type and language (" + ", ".join(f"{t}/{lang}" for t, lang in BLOCKS) + ")")
    earlier = earlier_questions(errors)
    texts = Counter(norm(r.get("question", "")).lower() for r in rows)
    if any(n > 1 for n in texts.values()):
        errors.append("the same question text occurs twice in this set")
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
        if len(row["docs"]) != 1:
            errors.append(f"{qid}: {len(row['docs'])} documents (every question is about one document)")
        for doc in row["docs"]:
            if not (corpus_dir() / doc).is_file():
                errors.append(f"{qid}: no such document {doc}")
        # cross-lingual exactly when the question's language is not a language of its document
        crosses = all(row["lang"] not in doc_langs(d) for d in row["docs"])
        if row["type"] == "cross-lingual":
            for d in row["docs"]:
                ok = d.startswith("contracts-zh/") if row["lang"] == "en" else (d.startswith(ENGLISH_DIRS) and d not in BILINGUAL)
                if not ok:
                    errors.append(f"{qid}: cross-lingual {row['lang']} question on {d}")
        elif crosses:
            errors.append(f"{qid}: question language differs from its document's but type is {row['type']}")
        if row["type"] in ("lookup", "unanswerable") and row["lang"] == "zh":
            if any(not d.startswith("contracts-zh/") for d in row["docs"]):
                errors.append(f"{qid}: Chinese {row['type']} questions are on the Chinese laws")
        if row["type"] == "unanswerable":
            if row["gold"] or row["answer"] != "not stated":
                errors.append(f"{qid}: unanswerable must have gold [] and answer 'not stated'")
            errors += absence_errors(qid, row["docs"], ABSENT.get(qid), STATES_IT.get(qid))
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
            # the quote must be in the document's language (Mulan: the English text for English questions)
            quote_is_zh = bool(HAN.search(gold["quote"]))
            if gold["doc"] in BILINGUAL:
                if quote_is_zh != (row["lang"] == "zh"):
                    errors.append(f"{qid}: quote language does not match the question's on bilingual {gold['doc']}")
            elif quote_is_zh != gold["doc"].startswith("contracts-zh/"):
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
    # every document of contracts-en/, contracts-zh/ and licenses/ is used at least once
    wanted = sorted(
        str(p.relative_to(corpus_dir())) for sub in ("contracts-en", "contracts-zh", "licenses")
        for p in (corpus_dir() / sub).glob("*.pdf")
    )
    used = {d for r in rows for d in r["docs"]}
    missing = [d for d in wanted if d not in used]
    if missing:
        errors.append(f"documents not used: {missing}")

    half = halves(rows)
    print(f"{len(rows)} questions in {SET.name}")
    print("by type:", dict(sorted(Counter(r["type"] for r in rows).items())))
    print("by language:", dict(sorted(Counter(r["lang"] for r in rows).items())))
    print("by type and language:", dict(sorted(Counter(f"{r['type']}/{r['lang']}" for r in rows).items())))
    print("documents (first listed):")
    for doc, n in sorted(Counter(r["docs"][0] for r in rows).items()):
        print(f"  {doc}: {n}")
    print(f"documents of contracts-en/, contracts-zh/, licenses/ used: {len(wanted) - len(missing)} of {len(wanted)}")
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
