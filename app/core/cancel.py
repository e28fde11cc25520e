"""A Stop that reaches every flag linked to it: a job's cancel, set once, also cuts the
request under way (the engine's client watches one threading.Event), without a thread that
polls both."""
from __future__ import annotations

import threading
from typing import Callable


class Cancel(threading.Event):
    """A threading.Event whose set() also sets the events linked to it."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._linked: list[threading.Event] = []

    def set(self) -> None:
        super().set()
        with self._guard:
            linked = list(self._linked)
        for event in linked:
            event.set()

    def link(self, event: threading.Event) -> Callable[[], None]:
        """`event` is set when this is (at once if it already is); returns the unlink."""
        with self._guard:
            self._linked.append(event)
        if self.is_set():
            event.set()

        def unlink() -> None:
            with self._guard:
                if event in self._linked:
                    self._linked.remove(event)
        return unlink
