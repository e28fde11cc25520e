"""Search vectors computed while the engine starts (`pagewise ask`)."""
from __future__ import annotations

import sys
import threading
import time


class VectorsWhileStarting:
    """Search vectors for the question's documents, computed while the engine starts (both take
    seconds). They never delay a question: when the engine is ready they are waited for only if
    the rest takes a moment at the speed measured so far; otherwise the question goes ahead with
    BM25 plus the vectors made so far, the embedding pauses while it is answered (the CPU
    scheduler, app.core.cpu_work) and goes on between and after the answers."""

    WAIT_S = 2.0        # the most a question waits for the last vectors

    def __init__(self, lib, doc_ids: list[int], quiet: bool) -> None:
        from app.core.search import dense
        self.lib, self.doc_ids, self.quiet, self.dense = lib, doc_ids, quiet, dense
        self.stop, self.thread = threading.Event(), None
        self.done = threading.Event()
        self.todo = lib.unembedded(doc_ids)
        self.rate: float | None = None      # passages/s measured so far
        if self.todo:
            self.thread = threading.Thread(target=self._work, name="search-vectors", daemon=True)
            self.thread.start()
        else:
            self.done.set()

    def _work(self) -> None:
        began = time.monotonic()

        def progress(done: int, total: int) -> None:
            self.rate = done / max(time.monotonic() - began, 1e-6)
        try:
            self.lib.embed(self.doc_ids, progress=progress, cancelled=self.stop.is_set)
        except self.dense.Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - search falls back to BM25; say so, go on
            self._say(f"[search] vectors not computed ({exc}); searching by words only")
        finally:
            self.done.set()

    def finish(self) -> None:
        """Called once the engine is ready, before the first question."""
        if self.thread is None:
            return
        left = self.lib.unembedded(self.doc_ids)
        if left and self.rate and left / self.rate <= self.WAIT_S:
            self.done.wait(self.WAIT_S * 2)
            left = self.lib.unembedded(self.doc_ids)
        if left:
            self._say(f"[search] search vectors paused while answering: {left} of {self.todo} passages left "
                      "(this answer finds them by their words; the vectors go on after it)")

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)
