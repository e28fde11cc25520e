"""The topics a comparison runs over, in English and Chinese: what each is called, the words
searched for it, and the words a clause heading naming it holds ("Governing Law", "保密")."""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    key: str                      # "termination" (also its English label)
    zh: str                       # "解除"
    search_en: str                # the query over an English document
    search_zh: str                # … over a Chinese one
    heading: tuple[str, ...]      # words (casefolded) a heading naming the topic holds
    aliases: tuple[str, ...] = ()  # what a user may type for it
    grant: str = ""               # a sentence granting the topic's right ("either party may terminate")
    aftermath: str = ""           # a clause about what follows it ("Effect of Termination", "解除后")

    def label(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.key

    def query(self, lang: str) -> str:
        """The search for this topic in a document of `lang` ("mixed": both languages)."""
        if lang == "zh":
            return self.search_zh
        return self.search_en if lang == "en" else f"{self.search_en} {self.search_zh}"


TOPICS = [
    Topic("termination", "解除", "termination terminate", "解除 终止",
          ("terminat", "term and", "解除", "终止"), ("term", "terminate", "终止", "解除合同"),
          grant=r"\b(?:may|can|is entitled to|has the right to|right to)\b[^.;]{0,40}?\bterminat"
                r"|(?:可以|有权|得)(?:随时|立即)?(?:通知[^，。]{0,10})?(?:解除|终止)",
          aftermath=r"\b(?:effects?|consequences?) of (?:termination|expiration)|\b(?:upon|following|after)"
                    r" (?:any |the )?(?:expiration or |effective date of )?terminat|\bsurviv"
                    r"|(?:解除|终止)(?:的，|后)"),
    Topic("liability", "责任", "limitation of liability liable damages", "违约责任 赔偿",
          ("liabilit", "damages", "责任", "赔偿"), ("limitation of liability", "违约责任", "赔偿")),
    Topic("payment", "付款", "payment fees invoice pay", "支付 价款 报酬",
          ("payment", "fees", "invoic", "支付", "价款", "报酬"), ("fees", "pay", "支付", "价款")),
    Topic("confidentiality", "保密", "confidential information confidentiality", "保密 商业秘密",
          ("confidential", "保密", "秘密"), ("confidential", "nda", "商业秘密")),
    Topic("governing law", "适用法律", "governing law jurisdiction courts", "适用 法律 管辖 争议 仲裁",
          ("governing law", "jurisdiction", "courts", "dispute", "适用", "管辖", "争议"),
          ("law", "jurisdiction", "法律", "管辖")),
]
DEFAULT_KEYS = [t.key for t in TOPICS]
_SPLIT = re.compile(r"\s*(?:,|，|、|;|；|\band\b|\bor\b|和|及|与)\s*")


def parse_topics(text: str | list[str] | None) -> list[Topic]:
    """The topics named in `text` ("termination, liability and payment", "解除、保密") or a
    list of them; a word that is no known topic is a topic of its own (searched as written).
    Nothing named: every topic of the template."""
    pieces = text if isinstance(text, list) else _SPLIT.split(text or "")
    pieces = [p.strip().strip(".。:：").strip() for p in pieces if p and p.strip(" .。:：")]
    if not pieces:
        return list(TOPICS)
    found: list[Topic] = []
    for piece in pieces:
        topic = _known(piece.casefold()) or Topic(piece, piece, piece, piece, (piece.casefold(),))
        if topic not in found:
            found.append(topic)
    return found


def _known(word: str) -> Topic | None:
    for topic in TOPICS:
        if word in (topic.key, topic.zh.casefold()) or word in topic.aliases:
            return topic
    return None


def short_question(topics: list[Topic], lang: str = "en") -> str:
    """What the chat shows for the comparison: "Compare clauses: termination, liability, …"."""
    names = [t.label(lang) for t in topics]
    if lang == "zh":
        return "条款对比：" + "、".join(names)
    return "Compare clauses: " + ", ".join(names)
