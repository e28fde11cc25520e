"""One conversation's context, grown append-only so every follow-up shares its prefix.

The engine keeps the KV state of the last prompt (and our llama.cpp worker keeps long ones on
disk), so a follow-up costs only what it adds — as long as the prompt up to there is exactly
what was sent before. A conversation is therefore kept as its turns: the passages each turn
added (in order, never moved or dropped), the question, and the model's reply as it was
generated. A follow-up appends the passages it needs that are not there yet, then its question.
When the context would overflow, a new conversation starts (the caller says so).

Except a retrieval follow-up with evidence cards: it is sent as a fresh prompt (the system
prompt, a recap of the last exchanges, its own cards, the question) — see `recaps`. Its turn is
kept all the same, so the ids of the cards it shows go on from the earlier ones.

Saved as JSON under the cache folder per document set, so a follow-up after a restart builds
the same prefix and the worker restores it from its disk store.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.core import paths
from app.core.answer import prompts
from app.core.settings import atomic_write
from app.core.textnorm import language


BEST_MARK = "(best match)"    # issue 19.3: the best-ranked passage is first and says so
RECAP_TURNS = 3               # a card follow-up's recap: the last exchanges, questions and short answers
RECAP_ANSWER_CHARS = 160      # an earlier answer cut to this in the recap (a long one steered the next)


@dataclass(frozen=True)
class Passage:
    doc: int                      # the document's number in the prompt
    page: int
    text: str
    best: bool = False            # retrieval's (or the model's) first choice: marked in the prompt
    ids: tuple[str, ...] = ()     # an evidence card's passage: the card ids it holds ("E1"), the
    quotes: tuple[str, ...] = ()  # cards' quotes (the model cites the id; the quote is the citation)
    clause: str = ""              # the clause the card sits in, named in its heading

    @property
    def block(self) -> str:
        if self.ids:
            clause = f" · {self.clause}" if self.clause else ""
            return f"[{', '.join(self.ids)}] doc {self.doc}, p. {self.page}{clause}\n{self.text.strip()}"
        mark = f" {BEST_MARK}" if self.best else ""
        return f"[doc {self.doc}, p. {self.page}]{mark}\n{self.text.strip()}"


@dataclass(frozen=True)
class CardRef:
    """An evidence card as the conversation's context holds it: its id and where its quote is."""
    id: str
    doc: int
    page: int
    quote: str


@dataclass
class Turn:
    passages: list[Passage]       # what this turn added to the context (whole documents: one block each)
    question: str
    reply: str                    # the model's raw reply, as generated: it is part of the prefix
    cards: list[str] = field(default_factory=list)   # the card ids this question was given to cite


@dataclass
class Conversation:
    doc_ids: tuple[int, ...] = ()
    mode: str = ""                # "" (nothing asked yet) | "whole-document" | "retrieval"
    turns: list[Turn] = field(default_factory=list)
    first_budget: int = 0         # the first question's prompt budget (follow-ups get a share)
    whole_text: str = ""          # whole-document mode: the documents' text, sent in the first turn
    first_prompt_tokens: int = 0  # the first question's prompt as sent (follow-ups add a share of it)
    last_prompt_tokens: int = 0   # the last prompt's size and its reply's: what the engine holds
    last_reply_tokens: int = 0
    restarts: int = 0             # times the context overflowed and a new one began
    thread: int = 0               # the library's conversation id (0: the set's one context of old)

    # --- what is in the context ---------------------------------------------------------------
    def passages(self) -> list[Passage]:
        return [p for t in self.turns for p in t.passages]

    def has(self, doc: int, page: int, text: str) -> bool:
        """The same page, or a passage containing this one, is already in the context."""
        return any(p.doc == doc and p.page == page and (text.strip() in p.text or p.text == text)
                   for p in self.passages())

    def card_refs(self, extra: list[Passage] = ()) -> dict[str, CardRef]:
        """Every evidence card in the context (and in `extra`), by id."""
        out = {}
        for p in self.passages() + list(extra):
            for card_id, quote in zip(p.ids, p.quotes):
                out[card_id] = CardRef(card_id, p.doc, p.page, quote)
        return out

    def card_id(self, doc: int, page: int, quote: str) -> str | None:
        """The id of a card already in the context with this quote, if any."""
        return next((c.id for c in self.card_refs().values()
                     if (c.doc, c.page, c.quote) == (doc, page, quote)), None)

    def next_card_number(self) -> int:
        return len(self.card_refs()) + 1

    def context_text(self, extra: list[Passage] = ()) -> str:
        """All document text the model may quote from (for the answer schema)."""
        blocks = [self.whole_text] if self.mode == "whole-document" else []
        return "\n\n".join(blocks + [p.block for p in self.passages() + list(extra)])

    def cached_tokens_estimate(self) -> int:
        """What the engine should still hold of this conversation: the last prompt and reply."""
        return self.last_prompt_tokens + self.last_reply_tokens

    # --- the messages ---------------------------------------------------------------------------
    def recaps(self, cards=()) -> bool:
        """A retrieval follow-up with evidence cards is sent as a fresh prompt: the system prompt,
        a short recap of the earlier exchanges, then all of its own cards and the question. Sent
        after the earlier turns as they were (cards, sentences and JSON replies), the 1.5B model
        answered follow-ups from the earlier cards or said "The document does not say." to
        questions it answered alone; the shared prefix saved only the earlier cards' reading."""
        return bool(cards) and self.mode == "retrieval" and bool(self.turns)

    def recap(self, question: str) -> str:
        """The last exchanges as "Q: … / A: …" lines, the answers cut short (the recap template
        in the question's language); "" before the first answer."""
        lines = []
        for turn in self.turns[-RECAP_TURNS:]:
            answer = " ".join(_reply_answer(turn.reply).split())
            if len(answer) > RECAP_ANSWER_CHARS:
                answer = answer[:RECAP_ANSWER_CHARS].rstrip() + " …"
            lines.append(f"- Q: {' '.join(turn.question.split())}\n  A: {answer or '-'}")
        if not lines:
            return ""
        return prompts.template(f"recap_{language(question)}").format(turns="\n".join(lines))

    def messages(self, question: str, new: list[Passage], cards: list[str] = ()) -> list[dict]:
        """System prompt, then each earlier turn exactly as sent and answered, then this one
        (a retrieval follow-up with cards: the system prompt, the recap, its cards and question).
        `cards`: the evidence card ids this question may cite (its own cards, new or already
        in the context)."""
        msgs = [{"role": "system", "content": prompts.template("system")}]
        if self.recaps(cards):
            q = prompts.question_text(question, "\n".join(p.text for p in new), cards)
            body = self._cards_user(len(self.turns), new, q)
            return msgs + [{"role": "user", "content": f"{self.recap(question)}\n\n{body}"}]
        for i, turn in enumerate(self.turns):
            msgs.append({"role": "user", "content": self._user(i, turn.passages, turn.question, turn.cards)})
            msgs.append({"role": "assistant", "content": turn.reply})
        msgs.append({"role": "user", "content": self._user(len(self.turns), new, question, list(cards))})
        return msgs

    def _user(self, index: int, passages: list[Passage], question: str, cards: list[str] = ()) -> str:
        shown = [p.text for t in self.turns[:index] for p in t.passages] + [p.text for p in passages]
        q = prompts.question_text(question, self.whole_text or "\n".join(shown), cards)  # its answer language
        if cards:                          # the question reads its own evidence cards (the same
            return self._cards_user(index, passages, q)   # in whole-document mode: after the documents)
        if self.mode == "whole-document":
            if index == 0:                 # the first turn is the prompt of a one-off question, so a
                return prompts.messages(self.whole_text, question, whole=True)[1]["content"]  # read's KV fits
            return q
        if not passages:
            return q
        name = "context_retrieval" if index == 0 else "context_more"
        ctx = prompts.template(name).format(documents="\n\n".join(p.block for p in passages))
        return f"{ctx}\n\n{q}"

    def _cards_user(self, index: int, passages: list[Passage], q: str) -> str:
        """A question with evidence cards: the documents first (whole-document mode's first
        turn, the same text a background reading holds), then the cards it adds, then the
        question naming the cards it may cite."""
        parts = []
        if self.mode == "whole-document" and index == 0:
            parts.append(prompts.template("context_whole").format(documents=self.whole_text))
        if passages:
            parts.append(prompts.template("context_cards").format(documents="\n\n".join(p.block for p in passages)))
        return "\n\n".join(parts + [q])

    def add(self, passages: list[Passage], question: str, reply: str, prompt_tokens: int,
            reply_tokens: int, cards: list[str] = ()) -> None:
        if not self.turns:
            self.first_prompt_tokens = prompt_tokens
        self.turns.append(Turn(list(passages), question, reply, list(cards)))
        self.last_prompt_tokens, self.last_reply_tokens = prompt_tokens, reply_tokens

    def begin(self, doc_ids: list[int], mode: str, budget: int, whole_text: str = "") -> None:
        """A new context: on the first question, a new document set, or an overflow."""
        if self.turns:
            self.restarts += 1
        self.doc_ids, self.mode, self.turns = tuple(doc_ids), mode, []
        self.first_budget, self.whole_text = budget, whole_text
        self.first_prompt_tokens = self.last_prompt_tokens = self.last_reply_tokens = 0

    # --- kept between runs ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Conversation":
        turns = [Turn([_passage(p) for p in t["passages"]], t["question"], t["reply"], list(t.get("cards", [])))
                 for t in data.get("turns", [])]
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "turns"}
        known["doc_ids"] = tuple(known.get("doc_ids", ()))
        return cls(**known, turns=turns)


def _reply_answer(reply: str) -> str:
    """The answer text of a raw JSON reply (the reply itself when it is not JSON)."""
    try:
        data = json.loads(reply)
    except ValueError:
        return reply.strip()
    return str(data.get("answer", "")).strip() if isinstance(data, dict) else reply.strip()


def _passage(data: dict) -> Passage:
    known = {k: v for k, v in data.items() if k in Passage.__dataclass_fields__}
    known["ids"], known["quotes"] = tuple(known.get("ids", ())), tuple(known.get("quotes", ()))
    return Passage(**known)


def _path(doc_ids: list[int], model: str, thread: int = 0) -> Path:
    named = f"{model}:{sorted(doc_ids)}" + (f":{thread}" if thread else "")
    key = hashlib.sha1(named.encode()).hexdigest()[:16]
    return paths.cache_dir() / "conversations" / f"{key}.json"


def load(doc_ids: list[int], model: str, thread: int = 0) -> Conversation:
    """The context last held in this conversation (`thread`: the library's conversation id)
    about these documents with this model, or a new one."""
    try:
        conv = Conversation.from_dict(json.loads(_path(doc_ids, model, thread).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        return Conversation(thread=thread)
    fits = sorted(conv.doc_ids) == sorted(doc_ids) and conv.thread == thread
    return conv if fits else Conversation(thread=thread)


def save(conv: Conversation, model: str) -> None:
    atomic_write(_path(list(conv.doc_ids), model, conv.thread),
                 json.dumps(conv.to_dict(), ensure_ascii=False))
