"""What the app remembers between runs to budget by time: prefill speed per model, and which
document sets the engine has already read (its KV state is kept on disk by the worker)."""
from __future__ import annotations

import json
from pathlib import Path

from app.core import paths
from app.core.settings import atomic_write

JUMP = 8        # a prefill speed this many times above or below the known one is not a refinement
# The speed prompts are sized by moves only when the measured one leaves this band. Wide: a
# prompt read again costs all of it, a budget half off costs at most half the first-token target
# (and our worker cuts the lower-ranked passages when it reads slower than planned). At 1.25 a
# 379-token answer, timed with its fixed costs, moved it and the next prompt was read again.
STEADY = 1.5
SAMPLES = 5     # prefill readings kept per model for model advice


class ReadingMemory:
    def __init__(self, path: Path | None = None):
        self.path = path or paths.cache_dir() / "reading_memory.json"
        try:
            self.data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.data = {}
        self.data.setdefault("prefill_tps", {})
        self.data.setdefault("read", {})

    def prefill_tps(self, model: str) -> float | None:
        return self.data["prefill_tps"].get(model)

    def record_prefill(self, model: str, new_tokens: int, seconds: float) -> None:
        """Keep a smoothed tokens/s; tiny prompts say little about prefill speed. A reading
        far faster than the speed known so far is a prompt the engine had cached without
        saying so (one such answer once left 93,868 tok/s here, and every later budget
        filled the context): it is not taken."""
        if new_tokens < 256 or seconds <= 0:
            return
        tps = new_tokens / seconds
        old = self.prefill_tps(model)
        if old is not None and tps > JUMP * old:
            return
        # far slower than known (another machine setting, or a wrong value kept): taken as it is
        fresh = old is None or tps * JUMP < old
        self.data["prefill_tps"][model] = round(tps if fresh else 0.5 * old + 0.5 * tps, 1)
        samples = self.data.setdefault("prefill_samples", {}).setdefault(model, [])
        samples[:] = (samples + [round(tps, 1)])[-SAMPLES:]
        self._save()

    def decode_tps(self, model: str) -> float | None:
        """The model's measured writing speed (tokens/s after the first), None until an answer measured it."""
        return self.data.get("decode_tps", {}).get(model)

    def record_decode(self, model: str, tokens: int, seconds: float) -> None:
        """Keep a smoothed writing speed; a reply of a few tokens says little about it."""
        if tokens < 16 or seconds <= 0:
            return
        tps, old = tokens / seconds, self.decode_tps(model)
        self.data.setdefault("decode_tps", {})[model] = round(tps if old is None else 0.5 * old + 0.5 * tps, 1)
        self._save()

    def steady_tps(self) -> dict[str, float]:
        """Speed key → the best of the last SAMPLES readings: what this machine does when it is
        not busy. Model advice uses it, so one reading on a loaded machine does not triple an
        advised model's time; a machine that became slower for good moves it within SAMPLES."""
        samples = self.data.get("prefill_samples", {})
        out = dict(self.data["prefill_tps"])
        out.update({k: max(v) for k, v in samples.items() if v})
        return out

    def budget_tps(self, model: str) -> float | None:
        """The speed prompts are sized by: the measured one, held while later answers keep it
        within a factor STEADY of it. Sized by a speed that moved after every answer, the same question
        on the same document picked other passages each time (1101 tokens, then 1103 sharing
        only 347 with them), so neither the engine's memory nor its KV state on disk matched
        and every answer after a restart read its prompt again (issues 32.18, 33.6)."""
        now = self.prefill_tps(model)
        steady = self.data.setdefault("budget_tps", {}).get(model)
        if now is None or (steady is not None and steady / STEADY <= now <= steady * STEADY):
            return steady if now is not None else None
        self.data["budget_tps"][model] = now
        self._save()
        return now

    def set_prefill(self, model: str, tps: float) -> None:
        """A measured speed (the engine's calibration at start), kept as it is."""
        self.data["prefill_tps"][model] = round(tps, 1)
        self._save()

    @staticmethod
    def _key(model: str, doc_ids: list[int]) -> str:
        return f"{model}:{','.join(map(str, sorted(doc_ids)))}"

    def was_read(self, model: str, doc_ids: list[int]) -> bool:
        return self._key(model, doc_ids) in self.data["read"]

    def mark_read(self, model: str, doc_ids: list[int]) -> None:
        self.data["read"][self._key(model, doc_ids)] = True
        self._save()

    def _save(self) -> None:
        """Atomic write: a crash never leaves half a file."""
        atomic_write(self.path, json.dumps(self.data))
