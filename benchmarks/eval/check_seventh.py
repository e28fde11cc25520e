"""Checks benchmarks/eval/seventh.jsonl: fields, types, composition, gold quotes on their pages, and that the
unanswerable (near-miss) questions' missing values really are absent from their documents.

Run from the repository root:  python benchmarks/eval/check_seventh.py
The corpus is read from $PAGEWISE_CORPUS, else ../shared/corpus beside the checkout, else /work/shared/corpus.
Exits 1 on any problem. (check_sixth.py adapted to this set.)
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = HERE / "seventh.jsonl"
PREFIX = "seventh"
sys.path.insert(0, str(HERE))
# The fields, the normalisation and the page texts are the third set's checker's (as in check_fourth/fifth/sixth.py).
from check_third import FIELDS, HAN, TYPES, corpus_dir, finish, norm, norm_strict, page_texts  # noqa: E402
# The bilingual licence, its languages and the halves are the fifth set's checker's (as in check_sixth.py).
from check_fifth import BILINGUAL, doc_langs, halves  # noqa: E402
# The question-copy and absence-probe checks are the sixth set's checker's.
from check_sixth import absence_errors, earlier_questions  # noqa: E402

# Chinese numerals or digits, for the Chinese probes.
N = "[\\d一二三四五六七八九十两百千]+"
# An English "N days/hours ... notice" head, digits only.
DN = r"\b\d+\s*(business )?(days?|hours?)['’]?\s*(prior |advance |written )*notice"

# For each unanswerable question (keyed by id): patterns that would state the missing figure, period, place
# or rule. Each must have no match anywhere in the document (normalised whole text). The comment says where
# the document leaves it instead, and which figure nearby is the trap.
ABSENT: dict[str, list[str]] = {
    # Bonterms Cloud 13: "where practicable will give Customer prior notice"; no days. Trap: a Suspension Event
    # is an account "30 days or more overdue" (same section).
    "seventh-031": [
        DN + r"[^.]{0,100}suspen",
        r"suspen\w*[^.]{0,100}" + DN,
        r"prior notice[^.]{0,60}\b(\d+|five|seven|ten|fifteen|thirty)\s*(business )?(days?|hours?)",
        r"(notice|notify)\w*[^.]{0,60}\b\d+\s*(days?|hours?)[^.]{0,30}before[^.]{0,30}suspen",
    ],
    # Bonterms Cloud 11: travel and lodging reimbursed "Subject to any limits in an Order or Statement of
    # Work" (left to the Order/SOW). Trap: the 1.5% late charge on the same page, the US$1,000 Trials cap.
    "seventh-032": [
        r"(travel|lodging)[^.]{0,150}(\$|USD|\bdollars?\b|not (to )?exceed|\bcap(ped)?\b|maximum|\d+(\.\d+)?\s?%)",
        r"(\$|USD|\bdollars?\b|\d+(\.\d+)?\s?%|not (to )?exceed|\bcap(ped)?\b)[^.]{0,100}(travel|lodging)",
    ],
    # Bonterms Cloud 7.1: Support "as described in the Support Policy on the Cover Page", else
    # "consistent with industry-standards"; no response time. Trap: the 99.9% availability target of 7.2.
    "seventh-033": [
        r"(respond|response)\w*[^.]{0,100}\b\d+\s*(business )?(hours?|minutes?|days?)",
        r"\b\d+\s*(business )?(hours?|minutes?)\b",
        r"(critical|urgent|severity|priority)[^.]{0,60}(ticket|issue|incident)",
    ],
    # Bonterms DPA 7.2: "Provider will notify Customer and advise the Data Subject to submit the request to
    # Customer"; no period. Trap: the 48-hour Specified Notice Period (Security Incidents), 30 days (4.3/4.4).
    "seventh-034": [
        r"(Data Subject|request from)[^.]{0,200}\b\d+\s*(business )?(days?|hours?)",
        r"\b\d+\s*(business )?(days?|hours?)[^.]{0,120}(Data Subject|individuals? to exercise)",
        r"(notify|forward|pass)\w*[^.]{0,80}request[^.]{0,80}\b(promptly|immediately|within)\b",
    ],
    # Bonterms DPA 9.3(c)(iii): an Audit occurs "at a mutually agreed date and time"; no notice period.
    # Trap: "no more than once annually" in the same list.
    "seventh-035": [
        r"\b\d+\s*(business )?(days?|weeks?)['’]?\s*(prior |advance |written )*notice[^.]{0,120}[Aa]udit",
        r"[Aa]udit[^.]{0,150}\b\d+\s*(business )?(days?|weeks?)['’]?\s*(prior |advance |written )*notice",
        r"[Aa]udit[^.]{0,150}(notice|notify)[^.]{0,40}\b(\d+|ten|fifteen|thirty|sixty)\s*(business )?(days?|weeks?)",
    ],
    # Bonterms DPA 8.2(b): "Provider will issue a certificate of deletion upon Customer's request"; no period.
    "seventh-036": [
        r"certificate[^.]{0,120}\b\d+\s*(business )?(days?|weeks?)",
        r"\b\d+\s*(business )?(days?|weeks?)[^.]{0,80}certificate",
        r"certificate of deletion[^.]{0,80}\b(promptly|within)\b",
    ],
    # Bonterms PSA 4.2: "regular updates"; no frequency. Trap: the 10-day Escalation Process of 4.3.
    "seventh-037": [
        r"(update|report)s?[^.]{0,100}\b(weekly|monthly|bi-?weekly|daily|every|each (week|month))\b",
        r"\b(weekly|monthly|bi-?weekly|fortnightly)\b",
        r"(update|report)s?[^.]{0,80}\bat least (once|every)",
    ],
    # Bonterms PSA 3.2: "Provider will notify Customer in the event the Services may be delayed due to
    # Customer's failure to provide a Dependency"; no period. Trap: 10 days (3.3(b)), 15-day Test Period (3.4).
    "seventh-038": [
        r"(delay|delayed)[^.]{0,150}\b\d+\s*(business )?(days?|hours?)",
        r"\b\d+\s*(business )?(days?|hours?)['’]?\s*(prior |advance |written )*notice[^.]{0,100}(delay|Dependency)",
        r"Dependency[^.]{0,150}\b\d+\s*(business )?(days?|hours?)",
    ],
    # Bonterms PSA 17.9(c): certificates of insurance "Upon request"; types and amounts are set on the Cover
    # Page or SOW. Trap: the 15-consecutive-day force majeure exit of 17.8 on the same page.
    "seventh-039": [
        r"(certificates? of insurance|evidence of coverage)[^.]{0,120}\b\d+\s*(business )?(days?|weeks?)",
        r"\b\d+\s*(business )?(days?|weeks?)[^.]{0,100}(certificates? of insurance|evidence of coverage)",
        r"(certificates? of insurance|evidence of coverage)[^.]{0,60}\b(promptly|within)\b",
    ],
    # Common Paper BAA 5.3(a): "Provider will either return or destroy ... all PHI"; no period. Trap: the
    # 30-day cure period of 5.2 on the same page.
    "seventh-040": [
        r"(return|destroy|destruction)\w*[^.]{0,150}\b\d+\s*(business )?(days?|weeks?|months?)",
        r"\b\d+\s*(business )?(days?|weeks?|months?)[^.]{0,100}(return|destroy|destruction)",
        r"(return|destroy)\w*[^.]{0,150}\b(ten|fifteen|thirty|sixty|ninety)\s*(business )?days?",
    ],
    # Common Paper BAA 2.2: "Company will notify Provider in a timely manner of any changes"; no period.
    # Trap: "ten business days" for individual requests (1.10) on the same page.
    "seventh-041": [
        r"(changes?|restrictions?|limitations?)[^.]{0,150}\b\d+\s*(business )?(days?|weeks?)",
        r"\b(ten|five|fifteen|thirty)\s*(business )?days?['’]?\s*(prior |advance |written )*notice",
        r"Company will notify Provider[^.]{0,120}\b(within|at least|\d+)\b",
    ],
    # Common Paper CSA: the Subscription Period is a Variable set in the Order Form (13.24 "length of
    # Subscription Period"). Trap: the framework terms' "longer of one year" (5.2) on the same page.
    "seventh-042": [
        r"Subscription Period\"?”? (means|is|will be)\b",
        r"Subscription Periods? (of|lasts?|runs?|for)\s+(\d+|one|two|three|twelve)",
        r"\b(\d+|twelve|one)[- ](month|year)s?\s+Subscription",
        r"(initial|each) Subscription Period[^.]{0,60}\b(\d+|one|twelve)\s*(months?|years?)",
    ],
    # Common Paper CSA 5.5(c): "Each Recipient will return or destroy Discloser's Confidential Information";
    # no period. Trap: "delete Customer Content within 60 days" in 5.5(b), the line above.
    "seventh-043": [
        r"(return|destroy)\w*[^.]{0,120}Confidential Information[^.]{0,80}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,100}(return|destroy)\w*[^.]{0,60}Confidential",
        r"Confidential Information[^.]{0,60}\bwithin \d+",
    ],
    # Common Paper CSA 2.2: "Provider will reinstate Customer's access ... only if Customer resolves the
    # underlying issue"; no period. Trap: the balance "for more than 30 days" that triggers suspension.
    "seventh-044": [
        r"reinstat\w*[^.]{0,120}\b\d+\s*(business )?(days?|hours?)",
        r"\b\d+\s*(business )?(days?|hours?)[^.]{0,80}reinstat",
        r"reinstat\w*[^.]{0,80}\b(promptly|immediately|within)\b",
    ],
    # Common Paper DPA 2.3: Provider may change the Categories, purposes, duration "by notifying Customer of
    # the updates and changes"; no period. Trap: 10 business days for subprocessor changes (2.6(a)).
    "seventh-045": [
        r"(Categories of (Data Subjects|Personal Data)|Nature and Purpose|Duration of Processing)[^.]{0,200}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?['’]?\s*(prior |advance |written )*(notice|in advance)[^.]{0,150}(update|change)s? (to|in) (the )?(Service|Categor|Processing)",
        r"notifying Customer of the updates and changes[^.]{0,60}\b(\d+|at least|in advance)",
    ],
    # Common Paper DPA 5.2: the Report is given "Upon written request"; no period. Trap: requests "only once
    # a year" (5.3), records kept "3 years" (5.1), 72 hours (4.1), all on the same page.
    "seventh-046": [
        r"(Report|audit report|summary copy)[^.]{0,150}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,100}(Report|summary copy)",
        r"[Uu]pon written request[^.]{0,80}\bwithin\b",
    ],
    # Common Paper MNDA 4: "reasonable advance notice of the required disclosure"; no days anywhere.
    "seventh-047": [
        DN,
        r"advance notice[^.]{0,80}\b(\d+|five|ten|fifteen|thirty)\s*(business )?(days?|hours?)",
        r"(required disclosure|subpoena|court order)[^.]{0,150}\b\d+\s*(business )?(days?|hours?)",
    ],
    # Common Paper MNDA 9: suits "in the federal or state courts located in Jurisdiction"; the Cover Page
    # reads "Jurisdiction: [Fill in city or county and state, ...]". Trap: the example "courts located in
    # New Castle, DE" in that blank.
    "seventh-048": [
        r"Jurisdiction: (?!\[Fill in)",
        r"courts located in (?!Jurisdiction|New Castle, DE)[A-Z]",
        r"(exclusive jurisdiction|courts)[^.]{0,60}(County|City) of [A-Z]",
    ],
    # Common Paper Partnership 3.3: Licensee "will promptly cease any use of the Licensor's Brand Elements upon
    # written notice"; no days. Trap: the 5-day cure notice for a 3.3(c) breach (6.2(b)) on the same page.
    "seventh-049": [
        r"(cease|stop|discontinue)\w*[^.]{0,100}(Brand Elements|logo)[^.]{0,100}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,60}(cease|stop|discontinue|remove)\w*[^.]{0,60}(Brand Elements|logo)",
        r"(cease|stop)\w* (any |all )?uses? of[^.]{0,80}\bwithin\b",
    ],
    # Common Paper Partnership 5.1: notice "prior to seeking any form of legal relief" and a meeting "Within 30
    # days after receipt of notice"; no waiting period after the meeting. Trap: that 30 days.
    "seventh-050": [
        r"(legal relief|court|litigation|lawsuit|legal action|\bsue\b)[^.]{0,100}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,100}(legal relief|litigation|lawsuit|legal action|\bsue\b|in court)",
        r"(after|following) the meeting[^.]{0,100}\b(\d+|thirty|sixty)\s*days?",
    ],
    # Common Paper Software License 5.4: repair, amend or replace; no period, and "Warranty Period" is an
    # undefined Variable.
    "seventh-051": [
        r"(repair|replac|correct|remedy|fix)\w*[^.]{0,120}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,80}(repair|replac|correct|remedy|fix)",
        r"Warranty Period\"?”? (means|is)\b",
    ],
    # Common Paper Software License 4.5(c): pay the final invoice "according to Section 3", i.e. "according to
    # the Payment Process" (3.5), a Variable of the Order Form. Trap: "within 30 days of an automatic payment"
    # and the 15-day dispute window of 3.6.
    "seventh-052": [
        r"(final bill|final invoice)[^.]{0,150}\b\d+\s*(business )?days?",
        r"Payment Process\"?”? (means|is)\b",
        r"(invoices?|Fees) (are|is|will be) (due|payable)[^.]{0,60}\b\d+\s*days?",
        r"within \d+\s*days (of|after) (the )?(invoice|receipt of)",
        r"\bnet[- ]?\d+\b",
    ],
    # GPLv3 6(d): source on a server must stay available "for as long as needed to satisfy these
    # requirements"; no years. Trap: the written offer "valid for at least three years" of 6(b), same page.
    "seventh-053": [
        r"(server|download|designated place|network)[^.]{0,150}\b(\d+|one|two|three|five|ten)[- ]years?",
        r"\b(\d+|one|two|three|five|ten)[- ]years?[^.]{0,100}(server|download|designated place)",
        r"available for (at least|a period of)",
    ],
    # MPL 2.0 3.2(a): inform recipients how to obtain the source "by reasonable means in a timely manner";
    # no days. (The 60/30 days of 5.1 are reinstatement periods.)
    "seventh-054": [
        r"(Source Code Form|source)[^.]{0,150}\b\d+\s*(business )?days?",
        r"\b\d+\s*(business )?days?[^.]{0,100}(Source Code Form|source)",
        r"timely manner\"?”? (means|is)",
        r"requests?[^.]{0,80}\bwithin \d+",
    ],
    # 劳动合同法第二十二条: 服务期由双方约定，法律不设上限（只限违约金不超过培训费用）。陷阱：同页第二十四条
    # 竞业限制期限"不得超过二年"。
    "seventh-055": [r"服务期[^。]{0,40}" + N + r"年", r"服务期[^。]{0,20}(不得超过|最长|上限)"],
    # 劳动合同法第五十条: "劳动者应当按照双方约定，办理工作交接"，无天数。陷阱：同条"十五日内"办理档案和社保转移。
    "seventh-056": [r"工作交接[^。]{0,30}" + N + r"(日|天)", N + r"(日|天)内[^。]{0,20}(办理|办结|完成)工作交接"],
    # 劳动合同法第八十四条第一款: 扣押身份证等证件的，"依照有关法律规定给予处罚"，无罚款数额。陷阱：同条第二款收取
    # 财物的"每人五百元以上二千元以下"罚款。
    "seventh-057": [
        r"(扣押|扣留)[^。]{0,40}(身份证|证件)[^。]{0,60}(罚款|" + N + r"元)",
        r"(身份证|证件)[^。]{0,60}" + N + r"元",
    ],
    # 个人信息保护法第六十六条第二款: 可以"禁止其在一定期限内担任"董监高，无年数。陷阱：同句"十万元以上一百万元以下"。
    "seventh-058": [
        r"禁止其?[^。]{0,10}" + N + r"年",
        N + r"年内[^。]{0,20}(不得)?担任[^。]{0,20}(董事|监事|高级管理人员)",
        r"一定期限[^。]{0,5}(为|是|指)",
    ],
    # 个人信息保护法第五十八条第（四）项: "定期发布个人信息保护社会责任报告"，无频率。陷阱：同页第五十六条"至少保存三年"。
    "seventh-059": [
        r"社会责任报告[^。]{0,30}(每年|每半年|每季度|年度|" + N + r"(年|个月))",
        r"(每年|每半年|年度)[^。]{0,20}(发布|公布)[^。]{0,20}社会责任报告",
    ],
    # 个人信息保护法第二十一条: 委托合同终止的，受托人"应当将个人信息返还个人信息处理者或者予以删除，不得保留"，无期限。
    "seventh-060": [r"(返还|删除)[^。]{0,40}" + N + r"(日|天|个工作日)", N + r"(日|天|个工作日)内[^。]{0,30}(返还|删除)"],
    # 电子签名法第十九条: 业务规则"向国务院信息产业主管部门备案"，无期限。陷阱：同页第十八条"四十五日内作出许可"。
    "seventh-061": [r"备案[^。]{0,30}" + N + r"(日|天|个工作日)", N + r"(日|天|个工作日)内[^。]{0,30}备案"],
    # 电子签名法第二十条: 收到证书申请后"应当对申请人的身份进行查验"，无期限。陷阱：同页第十八条"四十五日内"。
    "seventh-062": [
        r"查验[^。]{0,40}" + N + r"(日|天|个工作日)",
        r"(证书申请|申请人的身份)[^。]{0,40}" + N + r"(日|天|个工作日)",
        N + r"(日|天|个工作日)内[^。]{0,30}查验",
    ],
    # 民法典第一百八十八条: 超过二十年的，"人民法院可以根据权利人的申请决定延长"，无上限。陷阱：同条"三年""二十年"。
    "seventh-063": [r"延长[^。]{0,20}" + N + r"年", r"(最长|最多)[^。]{0,10}延长"],
    # 民法典第六十四条: 登记事项变化的"应当依法向登记机关申请变更登记"，无天数。
    "seventh-064": [r"变更登记[^。]{0,30}" + N + r"(日|天)", N + r"(日|天)内[^。]{0,30}(申请|办理)?变更登记"],
    # 民法典第七百二十二条: 可以请求承租人"在合理期限内支付"，逾期不支付的可以解除，无天数。陷阱：同页第七百二十六条
    # "十五日内"、第七百二十七条"五日前"。
    "seventh-065": [
        r"(拖欠|未支付|迟延支付)租金[^。]{0,60}" + N + r"(日|天|个月)",
        r"租金[^。]{0,30}(逾期|拖欠)[^。]{0,10}" + N + r"(日|天|个月)",
        r"(逾期|拖欠)" + N + r"(日|天|个月)[^。]{0,30}解除",
    ],
    # 民法典第六百五十二条: 中断供电"应当按照国家有关规定事先通知用电人"，无天数。
    "seventh-066": [r"(中断供电|停电|中止供电)[^。]{0,40}" + N + r"(日|天|小时)", r"(提前|事先)" + N + r"(日|天|小时)[^。]{0,20}通知用电人"],
    # 民法典第五百六十三条第二款: 不定期合同可以随时解除，"但是应当在合理期限之前通知对方"，无天数。陷阱：同页第五百
    # 六十四条"一年内"；第九百四十八条不定期物业服务合同"提前六十日"（另一类合同）。
    "seventh-067": [
        r"持续履行的债务[^。]{0,80}" + N + r"(日|天|个月)",
        r"不定期合同[^。]{0,40}" + N + r"(日|天|个月)",
        r"合理期限[^。]{0,6}(为|是|指)" + N,
    ],
    # 合同编通则解释第四十二条第二款: 有亲属关系、关联关系的"不受前款规定的百分之七十、百分之三十的限制"，另无比例。
    # 陷阱：同条的百分之七十、百分之三十。
    "seventh-068": [
        r"(亲属关系|关联关系)[^。]{0,40}(低于|高于|未达到|超过)[^。]{0,40}(百分之|％|%)",
        r"(亲属关系|关联关系)[^。]{0,20}(按照|适用)[^。]{0,20}(百分之|％|%)",
    ],
    # 合同编通则解释第二十七条: "经催告后在合理期限内仍不履行"，无天数。
    "seventh-069": [r"以物抵债[^。]{0,80}" + N + r"(日|天|个月)", r"催告[^。]{0,20}" + N + r"(日|天|个月)"],
    # 合同编通则解释第三条第二款: "可以根据案件的具体情况重新指定举证期限"，无天数。
    "seventh-070": [r"举证期限[^。]{0,30}" + N + r"(日|天)", N + r"(日|天)[^。]{0,10}举证期限"],
}

# A made-up sentence for each unanswerable question that states the missing answer; every probe of that
# question must match it (after normalisation), which shows the probe would have caught a real answer.
STATES_IT: dict[str, str] = {
    "seventh-031": "Provider will give Customer 10 days’ prior notice before it suspends access; on suspension Provider must give 10 days’ notice; prior notice of ten days is required; Provider will notify Customer 5 days before suspending.",
    "seventh-032": "Travel and lodging expenses are capped at $5,000 per Order; reimbursement of travel may not exceed 10% of the fees.",
    "seventh-033": "Provider will respond to critical tickets within 4 hours; response to Severity 1 incidents within 2 hours.",
    "seventh-034": "If Provider receives a request from a Data Subject, Provider will notify Customer within 5 business days; within 2 days of receipt Provider will forward requests from individuals to exercise their rights; Provider will notify Customer of the request within 48 hours.",
    "seventh-035": "Customer must give 30 days’ prior written notice before any Audit; for each Audit Customer will give 30 days’ notice; an Audit requires notice to Provider of at least 30 days.",
    "seventh-036": "Provider will issue a certificate of deletion within 10 days of request; within 10 business days Provider will provide a certificate.",
    "seventh-037": "Provider’s Project Lead will provide weekly updates; reports are due every two weeks; updates at least once a month.",
    "seventh-038": "If the Services may be delayed, Provider will notify Customer within 5 days; Provider will give 5 days’ notice of any delay; when a Dependency is late Provider must notify within 3 business days.",
    "seventh-039": "Provider will provide certificates of insurance within 10 days of request; within 5 business days Provider will deliver evidence of coverage.",
    "seventh-040": "Provider will return or destroy all PHI within 30 days after termination; within 30 days the destruction must be complete; return or destroy the PHI within thirty days.",
    "seventh-041": "Company will notify Provider of any changes within 10 days; Company must give ten days’ prior notice; Company will notify Provider at least 5 business days before the change.",
    "seventh-042": "“Subscription Period” means 12 months; each Subscription Period lasts 12 months; a 12-month Subscription Period applies; the initial Subscription Period is one year.",
    "seventh-043": "Each Recipient will return or destroy Confidential Information within 30 days; within 30 days after termination each Recipient will destroy all Confidential Information.",
    "seventh-044": "Provider will reinstate access within 2 business days; within 24 hours of payment Provider will reinstate access; Provider will reinstate it promptly.",
    "seventh-045": "Provider may change the Categories of Personal Data by notifying Customer 10 business days in advance; Provider will give 10 business days’ prior notice of changes to the Categories of Data Subjects; by notifying Customer of the updates and changes at least 10 business days before they apply.",
    "seventh-046": "Provider will send the Report within 30 days of written request; within 10 business days Provider will give a summary copy; Upon written request Provider will, within 30 days, provide it.",
    "seventh-047": "Receiving Party will give 5 days’ advance notice; advance notice of at least 5 business days before any required disclosure; for a subpoena or court order notice must be given 48 hours in advance.",
    "seventh-048": "Jurisdiction: courts located in San Francisco, California; the parties submit to the courts of the City of San Francisco.",
    "seventh-049": "Licensee will cease any use of the Licensor’s Brand Elements within 10 days; within 5 business days Licensee must stop using the logo; Licensee will cease all uses of the Brand Elements within ten days.",
    "seventh-050": "A party may seek legal relief only 30 days after the meeting; 15 days after the escalation meeting a party may sue; after the meeting the parties must wait 30 days.",
    "seventh-051": "Provider will repair or replace defective Software within 30 days; 30 days after notice Provider must correct the defect; “Warranty Period” means 90 days.",
    "seventh-052": "Customer will pay the final bill within 30 days; “Payment Process” means invoices are due net 30; Fees are due within 30 days; within 30 days of the invoice date payment is due.",
    "seventh-053": "If the object code is offered from a network server, the Corresponding Source must remain on the server for 3 years; three years after the last download it may be removed; the source must be available for at least three years.",
    "seventh-054": "You must provide the Source Code Form within 30 days of a request; 30 days after a request the source must be sent; “timely manner” means 30 days; on requests, within 30 days.",
    "seventh-055": "服务期最长不得超过五年；约定的服务期不得超过三年。",
    "seventh-056": "劳动者应当在离职后七日内办理工作交接；三日内完成工作交接。",
    "seventh-057": "扣押劳动者居民身份证的，处每人五百元以上罚款；扣押身份证的，每人罚款二千元。",
    "seventh-058": "禁止其五年内担任相关企业的董事、监事、高级管理人员；前款所称一定期限为五年。",
    "seventh-059": "应当每年发布个人信息保护社会责任报告；社会责任报告每年发布一次。",
    "seventh-060": "委托合同终止的，受托人应当在十五日内将个人信息返还或者删除；删除应当在十日内完成。",
    "seventh-061": "电子认证服务提供者应当自公布之日起三十日内向主管部门备案电子认证业务规则；备案应当在业务规则公布后三十日完成。",
    "seventh-062": "电子认证服务提供者收到证书申请后应当在五个工作日内对申请人的身份进行查验；查验应当在三日内完成。",
    "seventh-063": "人民法院可以决定延长，延长期间最长不超过十年；最多延长五年。",
    "seventh-064": "法人登记事项发生变化的，应当自变化之日起三十日内申请变更登记；变更登记应当在三十日内办理。",
    "seventh-065": "承租人拖欠租金满三个月的，出租人可以解除合同；租金逾期三十日的，出租人可以解除合同；逾期三十日不支付租金的，出租人可以解除合同。",
    "seventh-066": "供电人计划检修需要中断供电的，应当提前七日通知用电人。",
    "seventh-067": "以持续履行的债务为内容的不定期合同，当事人解除合同应当提前三十日通知对方；不定期合同的解除通知期为三十日；合理期限为三十日。",
    "seventh-068": "债务人与相对人存在关联关系的，转让价格低于市场交易价百分之八十的，可以认定为明显不合理的低价；关联关系交易按照百分之九十认定。",
    "seventh-069": "以物抵债协议经催告后三十日内仍不履行的，债权人可以请求履行原债务。",
    "seventh-070": "人民法院重新指定举证期限的，举证期限为十五日；不少于十五日的举证期限。",
}

# Near misses with a trap: a different figure of the same kind on the same page or in the same clause
# family. (page, text) must occur on that page of the question's document (normalised).
TRAPS: dict[str, tuple[int, str]] = {
    "seventh-031": (3, "Customer’s account is 30 days or more overdue"),
    "seventh-032": (2, "Late payments are subject to a charge of 1.5% per month"),
    "seventh-033": (1, "available for Customer’s use 99.9% of the time in each month"),
    "seventh-034": (2, "“Specified Notice Period” is 48 hours"),
    "seventh-035": (5, "occur no more than once annually"),
    "seventh-037": (4, "unable to resolve the issue within 10 days"),
    "seventh-038": (3, "Customer will have 15 days (the “Test Period”)"),
    "seventh-039": (10, "for 15 or more consecutive days"),
    "seventh-040": (3, "within 30 days after receiving notice of the breach"),
    "seventh-041": (2, "ten business days"),
    "seventh-042": (3, "continue for the longer of one year"),
    "seventh-043": (4, "Provider will delete Customer Content within 60 days"),
    "seventh-044": (2, "undisputed balance on its account for more than 30 days"),
    "seventh-045": (2, "at least 10 business days in advance"),
    "seventh-046": (4, "may only be made once a year"),
    "seventh-048": (1, "courts located in New Castle, DE"),
    "seventh-049": (2, "fails to cure a breach of Section 3.3(c) upon 5 days notice"),
    "seventh-050": (2, "Within 30 days after receipt of notice"),
    "seventh-052": (3, "within 30 days of an automatic payment"),
    "seventh-053": (5, "valid for at least three years"),
    "seventh-055": (3, "竞业限制期限，不得超过二年"),
    "seventh-056": (7, "并在十五日内为劳动者办理档案和社会保险关系转移手续"),
    "seventh-057": (10, "以每人五百元以上二千元以下的标准处以罚款"),
    "seventh-058": (9, "处十万元以上一百万元以下罚款"),
    "seventh-059": (7, "应当至少保存三年"),
    "seventh-061": (3, "自接到申请之日起四十五日内作出许可或者不予许可的决定"),
    "seventh-062": (3, "自接到申请之日起四十五日内作出许可或者不予许可的决定"),
    "seventh-063": (16, "自权利受到损害之日起超过二十年的"),
    "seventh-065": (23, "承租人在十五日内未明确表示购买的"),
    "seventh-067": (10, "一年内不行使"),
    "seventh-068": (9, "不受前款规定的百分之七十、百分之三十的限制"),
}
# Near misses where the document hands the value to a form it only refers to (Order, SOW, Cover Page,
# Order Form variable). (page, text) must occur on that page.
LEFT_TO_FORM: dict[str, tuple[int, str]] = {
    "seventh-032": (2, "Subject to any limits in an Order or Statement of Work"),
    "seventh-033": (1, "as described in the Support Policy on the Cover Page"),
    "seventh-039": (10, "amounts and duration specified on the Cover Page or applicable SOW"),
    "seventh-042": (11, "length of Subscription Period"),
    "seventh-048": (1, "Jurisdiction: [Fill in city or county and state"),
    "seventh-052": (3, "according to the Payment Process"),
}
# Near misses asked in a unit-specific way ("how many days/hours/months/years/business days", "多少天",
# "几年", "百分之几"...). Each question must contain its marker.
UNIT_SPECIFIC: dict[str, str] = {
    "seventh-031": "how many days", "seventh-033": "how many hours", "seventh-034": "how many days",
    "seventh-035": "how many days", "seventh-036": "how many days", "seventh-038": "how many days",
    "seventh-039": "how many days", "seventh-040": "how many days", "seventh-041": "how many days",
    "seventh-042": "how many months", "seventh-043": "how many days", "seventh-044": "how many days",
    "seventh-045": "how many business days", "seventh-046": "how many days", "seventh-047": "how many days",
    "seventh-049": "how many days", "seventh-050": "how many days", "seventh-051": "how many days",
    "seventh-052": "how many days", "seventh-053": "how many years", "seventh-054": "how many days",
    "seventh-055": "几年", "seventh-056": "几天", "seventh-058": "几年", "seventh-060": "多少天",
    "seventh-061": "多少日", "seventh-062": "几个工作日", "seventh-063": "几年", "seventh-064": "多少日",
    "seventh-065": "多少天", "seventh-066": "几天", "seventh-067": "多少天", "seventh-069": "多少天",
    "seventh-070": "多少天",
}

# The composition the brief asks for: (type, lang) -> count.
EXPECTED = {
    ("lookup", "en"): 14,  # English value questions on English contracts and licences
    ("lookup", "zh"): 10,  # Chinese value questions on the Chinese laws
    ("cross-lingual", "en"): 3,  # English questions about a Chinese law
    ("cross-lingual", "zh"): 3,  # Chinese questions about an English contract or licence
    ("unanswerable", "en"): 24,  # English documents
    ("unanswerable", "zh"): 16,  # Chinese laws
}
# Ids run in blocks by type and language, in this order.
BLOCKS = [
    ("lookup", "en"), ("lookup", "zh"), ("cross-lingual", "en"), ("cross-lingual", "zh"),
    ("unanswerable", "en"), ("unanswerable", "zh"),
]
MIN_TRAPS, MIN_UNIT = 15, 8
# The earlier question sets whose question texts must not be repeated (dev lives beside the corpus).
EARLIER = ["second-en.jsonl", "second-zh.jsonl", "third.jsonl", "fourth.jsonl", "fifth.jsonl", "sixth.jsonl"]

ENGLISH_DIRS = ("contracts-en/", "licenses/")


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
    earlier = earlier_questions(errors, EARLIER)
    texts = Counter(norm(r.get("question", "")).lower() for r in rows)
    if any(n > 1 for n in texts.values()):
        errors.append("the same question text occurs twice in this set")
    page1_lookups = 0
    by_id = {r["id"]: r for r in rows}
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
        if row["type"] in ("lookup", "unanswerable") and row["lang"] == "en":
            if any(not d.startswith(ENGLISH_DIRS) for d in row["docs"]):
                errors.append(f"{qid}: English {row['type']} questions are on the English contracts and licences")
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
                errors.append(f"{qid}: quote of {len(norm(gold['quote']))} characters (must be 20-200)")
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
    # traps and forms: the cited figure or reference must be on the cited page of the question's document
    for label, table in (("trap", TRAPS), ("form", LEFT_TO_FORM)):
        for qid, (page, snippet) in table.items():
            row = by_id.get(qid)
            if row is None or row["type"] != "unanswerable":
                errors.append(f"{qid}: {label} recorded for a question that is not unanswerable")
                continue
            pages = page_texts(row["docs"][0])
            if not 1 <= page <= len(pages) or norm(snippet) not in norm(pages[page - 1]):
                errors.append(f"{qid}: {label} text not on {row['docs'][0]} p{page}: {snippet}")
    for qid, marker in UNIT_SPECIFIC.items():
        row = by_id.get(qid)
        if row is None or row["type"] != "unanswerable" or marker.lower() not in row["question"].lower():
            errors.append(f"{qid}: unit-specific marker '{marker}' not in an unanswerable question")
    if len(TRAPS) < MIN_TRAPS:
        errors.append(f"only {len(TRAPS)} near misses with a trap (at least {MIN_TRAPS})")
    if len(UNIT_SPECIFIC) < MIN_UNIT:
        errors.append(f"only {len(UNIT_SPECIFIC)} unit-specific near misses (at least {MIN_UNIT})")
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
    print(f"near misses with a trap on the cited page: {len(TRAPS)}; left to a referred form: {len(LEFT_TO_FORM)}; "
          f"unit-specific: {len(UNIT_SPECIFIC)}")
    print(f"quotes also found under second-zh's stricter normalisation: {strict_ok} of {quotes}")
    return finish(notes, errors, quotes)


if __name__ == "__main__":
    sys.exit(main())
