"""Prompt templates from resources/prompts (English and Chinese) and the answer's JSON schema."""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

from app.core.textnorm import language

PROMPTS = Path(__file__).resolve().parents[3] / "resources" / "prompts"

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "doc": {"type": "integer"},
                    "page": {"type": "integer"},
                    "quote": {"type": "string"},
                },
                "required": ["doc", "page", "quote"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["answer", "citations"],
    # Said outright: JSON Schema allows other keys by default, and llguidance (vLLM) honours
    # that, so the model filled citations with "id", "title", "author", … to the token limit.
    "additionalProperties": False,
}

# The answer string is bounded so that a rambling or looping model still reaches its
# citations within the answer's token budget: without a bound the embedded model used
# the whole budget on 9 of 12 dev questions and cited nothing. The bound is a share of
# the budget in characters, by how many characters a token holds for this model and
# language (measured on the prompt when it is in the answer's language; else these
# defaults, on the low side: SmolLM2 spends ~1.7 tokens on a Chinese character).
ANSWER_SHARE = 0.55
CHARS_PER_TOKEN = {"en": 3.5, "zh": 0.55}


# At most this many characters: llama.cpp's grammar parser refuses a bounded repetition that
# unrolls into more than 2,000 rules (MAX_REPETITION_THRESHOLD), which the answer's pattern
# passes above ~1,000 characters (1,000 compiles, 1,010 does not, with Qwen's and SmolLM2's
# vocabularies). A real model's English prompt holds ~4.8 characters a token, enough to get there.
MAX_ANSWER_CHARS = 1000


def answer_chars(lang: str, answer_tokens: int, chars_per_token: float | None = None) -> int:
    """Rounded down to a multiple of 50: every question about a document then gets the same
    schema, and the engine reuses its compiled grammar."""
    ratio = chars_per_token or CHARS_PER_TOKEN.get(lang, CHARS_PER_TOKEN["en"])
    return max(50, min(MAX_ANSWER_CHARS, int(answer_tokens * ANSWER_SHARE * ratio) // 50 * 50))


def answer_bound(schema: dict) -> int:
    """The answer's character bound in a schema made by answer_schema."""
    return schema["properties"]["answer"]["maxLength"]


# The answer's language held by the grammar (issue 33): a prompt line was not enough — the
# embedded model wrote "The document does not say." to a Chinese question on a Chinese law and
# English to a Chinese question on an English contract. The answer's first letter must be of the
# question's script; what follows is free, so names and quotes in the other script still fit.
# Before it: only opening marks in Chinese (figures first let the small model invent dates,
# "2017-01-…", on its way to the Han letter), marks and figures in English ("30 days …").
ANSWER_LETTERS = {"zh": "\u4e00-\u9fff", "en": "A-Za-z"}
ANSWER_LEAD = {"zh": "\u201c\u300a\u300c\uff08\u3010\u2022* -", "en": "0-9$\u00a3\u20ac%.,()\u201c' -"}
JSON_CHAR = r'^"\\\x00-\x1f'           # a JSON string's raw character: no quote, backslash, control
LEAD_CHARS = 8


def answer_pattern(lang: str, max_chars: int) -> str:
    """A regex (JSON Schema `pattern`, anchored for llama.cpp's converter) for an answer of at
    most `max_chars` whose first letter is in the script of `lang`."""
    rest = max(0, max_chars - LEAD_CHARS - 1)
    return (f"^[{ANSWER_LEAD[lang]}]{{0,{LEAD_CHARS}}}[{ANSWER_LETTERS[lang]}][{JSON_CHAR}]{{0,{rest}}}$")


def answer_schema(quotes: list[str], max_chars: int, lang: str | None = None) -> dict:
    """ANSWER_SCHEMA for one prompt: quotes limited to the prompt's own sentences (when
    given), the answer to `max_chars` and, given `lang`, begun in that language's script.
    Constrained decoding turns this into the grammar both engines (llama.cpp, vLLM) generate
    under (`maxLength` is kept beside the pattern for engines that read both)."""
    schema = copy.deepcopy(ANSWER_SCHEMA)
    props = schema["properties"]
    props["answer"]["maxLength"] = max_chars
    if lang in ANSWER_LETTERS:
        props["answer"]["pattern"] = answer_pattern(lang, max_chars)
    if quotes:
        props["citations"]["items"]["properties"]["quote"] = {"enum": list(quotes)}
    return schema


def card_schema(card_ids: list[str], max_chars: int, lang: str | None = None) -> dict:
    """The reply's schema when the question reads evidence cards: the answer as in
    answer_schema, the citations the ids of this question's own cards (never another
    question's: a follow-up cannot fall back on the sentence an earlier answer cited), none
    at all when the documents do not state the answer ("The document does not say.")."""
    schema = answer_schema([], max_chars, lang)
    schema["properties"]["citations"] = {
        "type": "array", "maxItems": min(3, len(card_ids)),
        "items": {"type": "object", "properties": {"card": {"enum": list(card_ids)}},
                  "required": ["card"], "additionalProperties": False}}
    return schema


NOT_STATED = {"en": "The document does not say.", "zh": "文件没有规定。"}


@lru_cache(maxsize=None)
def template(name: str) -> str:
    return (PROMPTS / f"{name}.md").read_text(encoding="utf-8").strip()


# Said last, when the documents are in the other language: a model reading pages of English
# answered a Chinese question in English (issue 33), the question's own "请用中文回答" not
# being enough against thousands of English words before it.
ANSWER_LANGUAGE = {
    "zh": "文件是英文的，问题是中文：answer 用简体中文写；quote 照抄页面英文原文，不要翻译。",
    "en": "The documents are in Chinese, the question in English: write the answer in English; "
          "copy each quote exactly as printed, in Chinese.",
}


# When the model still answers in the other language (the embedded 135M model writes English to a
# Chinese question whatever it is told, measured on the NDA): the app says so in the question's
# language and points to the evidence, which is quoted as printed.
LANGUAGE_MISSED = {
    "zh": "模型没有用中文回答（内置的小模型常忽略语言要求）：请以上面摘自原文的证据为准。",
    "en": "The model did not answer in English (small models often ignore the language asked for): "
          "rely on the evidence quoted above.",
}


def language_missed(question: str, answer: str) -> str | None:
    """The warning when `answer` is not in the question's language (None when it is, or empty)."""
    if not answer.strip() or answer.strip() == NOT_STATED[language(question)]:
        return None
    lang = language(question)
    return LANGUAGE_MISSED[lang] if language(answer) != lang else None


def question_text(question: str, documents: str = "", cards=()) -> str:
    """The question as sent, with its answer language; `documents` (their text, or a sample
    of it) adds the cross-language line when they are in the other language; `cards`: the
    evidence card ids it is to answer from and cite."""
    lang = language(question)
    if cards:
        q = template(f"question_cards_{lang}").format(question=question.strip(), cards=", ".join(cards))
    else:
        q = template(f"question_{lang}").format(question=question.strip())
    if documents and language(documents[:20000]) != lang:
        q = f"{q}\n{ANSWER_LANGUAGE[lang]}"
    return q


def messages(context: str, question: str, whole: bool) -> list[dict]:
    """System prompt and documents first, question last, so follow-ups share the prefix.
    The answer is asked for in the question's language, whatever the documents'."""
    ctx = template("context_whole" if whole else "context_retrieval").format(documents=context)
    return [{"role": "system", "content": template("system")},
            {"role": "user", "content": f"{ctx}\n\n{question_text(question, context)}"}]
