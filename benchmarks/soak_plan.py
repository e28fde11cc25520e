"""What a soak asks, and how it reports: shared by the three soaks (the runtime, one CLI
conversation, one window session) in benchmarks/soak.py.

The questions are the evaluation set's (benchmarks/eval: each names its document or pair),
asked in turn until the count is reached, so the run crosses the corpus' English and Chinese
contracts, laws and papers. No answer's content is checked here (benchmarks/quality.py does
that): a soak counts what fails, what verifies, and what memory does over time.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import common


@dataclass(frozen=True)
class SoakQuestion:
    question: str
    files: tuple[Path, ...]      # the document(s) it is asked of


def questions(count: int) -> list[SoakQuestion]:
    rows = [json.loads(line) for line in common.EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    asked = [SoakQuestion(r["question"], tuple(common.CORPUS / d for d in r["docs"])) for r in rows]
    return [asked[n % len(asked)] for n in range(count)]


@dataclass
class SoakResult:
    via: str
    questions: int
    every: int
    failures: list[str] = field(default_factory=list)
    verified: int = 0
    answered: int = 0
    rss: list[tuple[int, float, float | None]] = field(default_factory=list)   # (after n, app MB, worker MB)
    kills: int = 0
    restarts: int | None = None
    readded: tuple | None = None
    seconds: float = 0.0
    integrity: str = ""
    orphans: int = 0

    def note_memory(self, n: int, app_pid: int | None, worker_pid: int | None) -> None:
        def mb(pid):
            try:
                return common.rss_mb(pid)
            except (OSError, ValueError, IndexError):
                return None
        self.rss.append((n, mb(app_pid), mb(worker_pid) if worker_pid else None))

    def check_library(self, path: Path) -> None:
        con = sqlite3.connect(path)
        try:
            self.integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
            self.orphans = len(con.execute("PRAGMA foreign_key_check").fetchall())
        finally:
            con.close()

    def growth(self, column: int) -> float | None:
        """Memory at the end against the first sample after warm-up (the first `every`
        questions load the models, the search vectors and the caches)."""
        values = [r[column] for r in self.rss[1:] if r[column]]
        return values[-1] / values[0] - 1 if len(values) >= 2 else None

    def ok(self) -> bool:
        return not self.failures and self.integrity == "ok" and not self.orphans

    def print(self) -> None:
        print(f"\n[{self.via}] {self.answered} of {self.questions} questions answered in {self.seconds:.0f} s: "
              f"{len(self.failures)} failures, {self.verified} answers with a verified citation")
        restarts = "" if self.restarts is None else f", {self.restarts} restarts"
        readded = (f"; a document removed and added again: id {self.readded[0]} → {self.readded[1]}"
                   if self.readded else "")
        print(f"worker killed {self.kills} times{restarts}{readded}; library integrity {self.integrity}, "
              f"{self.orphans} rows without their document")
        for n, app_mb, worker_mb in self.rss:
            print(f"  after {n:>3} questions: app RSS {app_mb or 0:.0f} MB, worker RSS {worker_mb or 0:.0f} MB")
        for name, column in (("app", 1), ("worker", 2)):
            g = self.growth(column)
            if g is not None:
                print(f"  {name} memory from question {self.rss[1][0]} to the end: {g:+.1%}")
        for f in self.failures[:10]:
            print(f"  failure: {f}")

    def to_dict(self) -> dict:
        return {"via": self.via, "questions": self.questions, "every": self.every,
                "answered": self.answered, "failures": self.failures, "verified": self.verified,
                "rss_mb": self.rss, "kills": self.kills, "restarts": self.restarts,
                "readded": self.readded, "seconds": round(self.seconds, 1), "integrity": self.integrity,
                "orphans": self.orphans, "app_growth": self.growth(1), "worker_growth": self.growth(2)}


def worker_pid(parent: int) -> int | None:
    """The engine worker among `parent`'s children (`python -m app.worker.llama …`)."""
    from app.worker.protocol import MODULE
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == parent and MODULE in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode():
                return int(proc.name)
        except (OSError, ValueError, IndexError):
            continue
    return None
