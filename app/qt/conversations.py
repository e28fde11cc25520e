"""Which conversation about the documents asked is on screen (issue 33): the list, switching,
"New conversation", and the engine's context following the conversation shown.

The library keeps the conversations (app.core.library: one per exchange, several per document
set); the engine keeps each one's append-only context (app.core.answer.conversation, saved per
conversation), so a follow-up continues the conversation it is asked in and a new conversation
carries nothing of the others.
"""
from __future__ import annotations

from app.qt import transcript_entries as history
from app.qt import window_state as gui_settings


class Conversations:
    def __init__(self, window) -> None:
        self.window = window
        self.bar = window.chat.conversations
        self._shown: dict[tuple[int, ...], int] = {}     # document set → the conversation on screen
        self.bar.sig_chosen.connect(self.choose)
        self.bar.sig_new.connect(self.new)

    def key(self) -> tuple[int, ...]:
        return tuple(sorted({i.id for i in self.window.doc_infos()}))

    def current(self) -> int | None:
        """The conversation on screen for the documents asked (None: none yet)."""
        return self._shown.get(self.key())

    # -- what is shown ----------------------------------------------------------------
    def refresh(self) -> None:
        """The documents asked changed: their conversations listed, the one last shown (else the
        most recently used) on screen with its answers, timings and models."""
        self.refresh_list()
        self._show_history()

    def refresh_list(self) -> None:
        key = self.key()
        listed = self.window.library.conversations(list(key)) if key else []
        if self._shown.get(key) not in {c.id for c in listed}:
            self._shown.pop(key, None)
            if listed:
                self._shown[key] = listed[0].id
        self.bar.set_conversations(listed, self._shown.get(key))

    def _show_history(self) -> None:
        infos, shown = self.window.doc_infos(), self.current()
        exchanges = self.window.library.exchanges([i.id for i in infos], conversation=shown) \
            if infos and shown is not None else []
        entries = history.entries(exchanges, infos)
        self.window.chat.set_history(entries)
        if entries:         # the Citations panel lists the shown answer's cards and citations
            self.window.show_entry_sources(entries[-1])
            self.window.citations.select(gui_settings.selected_card_of(self.window.settings, shown))
        else:
            self.window.citations.set_citations([])

    # -- the user's choices -----------------------------------------------------------
    def choose(self, conversation_id: int) -> None:
        if self.window.chat.busy() or not self.key():
            return
        self._shown[self.key()] = conversation_id
        self.refresh()

    def new(self) -> None:
        """An empty conversation (the one on screen when it is empty already)."""
        key = self.key()
        if self.window.chat.busy() or not key:
            return
        shown = self._shown.get(key)
        if shown is None or self.window.library.exchanges(list(key), conversation=shown):
            self._shown[key] = self.window.library.new_conversation(list(key))
        self.refresh()

    # -- asking ---------------------------------------------------------------------
    def for_question(self) -> int:
        """The conversation a question now asked belongs to (made when there is none), with
        the engine's context set to it."""
        key = self.key()
        if self._shown.get(key) is None:
            self._shown[key] = self.window.library.new_conversation(list(key))
            self.refresh_list()
        engine_key = tuple(sorted(i.id for i in self.window.doc_infos()))   # as the engine keys its contexts
        self.bind_engine(engine_key, self._shown[key])
        return self._shown[key]

    def bind_engine(self, key: tuple[int, ...], conversation_id: int) -> None:
        """The engine's context for this document set is this conversation's (kept on disk per
        conversation, so it also continues after a restart)."""
        self.window.engine.service.bind_conversation(key, conversation_id)
