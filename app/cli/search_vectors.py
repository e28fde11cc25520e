"""Search vectors computed while the engine starts (`pagewise ask`)."""
from __future__ import annotations

import sys
import threading


class VectorsWhileStarting:
    """Search vectors for the question's documents, computed while the engine starts
    (both take seconds). Waited for when few are left; otherwise the question goes
    ahead with BM25 plus the vectors made so far, and later runs finish the rest."""

    WAIT_FOR = 300      # passages: ~1-2 min on 2 busy cores, seconds on a desktop CPU

    def __init__(self, lib, doc_ids: list[int], quiet: bool) -> None:
        from app.core.search import dense
        self.lib, self.doc_ids, self.quiet, self.dense = lib, doc_ids, quiet, dense
        self.stop, self.thread = threading.Event(), None
        self.todo = lib.unembedded(doc_ids)
        if self.todo:
            self.thread = threading.Thread(target=self._work, name="search-vectors", daemon=True)
            self.thread.start()

    def _work(self) -> None:
        try:
            self.lib.embed(self.doc_ids, cancelled=self.stop.is_set)
        except self.dense.Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - search falls back to BM25; say so, go on
            self._say(f"[search] vectors not computed ({exc}); searching by words only")

    def finish(self) -> None:
        if self.thread is None:
            return
        left = self.lib.unembedded(self.doc_ids)
        if left > self.WAIT_FOR:
            self.stop.set()
            self._say(f"[search] {left} of {self.todo} passages still lack search vectors; "
                      "this answer uses words only for them (`pagewise index FILE` finishes them)")
        elif left:
            self._say(f"[search] computing search vectors: {left} passages left")
        self.thread.join()

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)
