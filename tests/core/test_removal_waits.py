"""Issue 32: a removal waits for the work on its document. An answer holds its documents
(app/core/documents/doc_locks.py) from its first search to its last check; `pagewise library
remove` in another process waits for it, says so, and new answers cannot keep it waiting for
ever. Before, the removal went through at once and the answer failed half-way ("document 1
has no page 5") or was computed and then thrown away."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.support.cli import ROOT, run_process

SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"

# another process "answers" over document 1: holds it as qa.ask does, for `hold` seconds
HOLDER = """
import sys, time
from pathlib import Path
from app.core.documents import doc_locks
from app.core.library import Library
lib = Library()
hold, repeat = float(sys.argv[1]), int(sys.argv[2])
for _ in range(repeat):
    try:
        with doc_locks.in_use(lib, [1]):
            print("holding", flush=True)
            time.sleep(hold)
    except doc_locks.DocumentGone:
        print("gone", flush=True)
        break
Path(sys.argv[3]).write_text(str(time.time()))
"""


def _index(home: Path) -> None:
    res = run_process("index", str(SAMPLE), "--no-dense", home=home)
    assert res.returncode == 0, res.stderr


def _holder(home: Path, hold: float, repeat: int, done: Path) -> subprocess.Popen:
    import os
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(hold), str(repeat), str(done)], cwd=ROOT,
                            env={**os.environ, "PAGEWISE_HOME": str(home)}, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_a_removal_waits_for_the_answer_reading_the_document(tmp_path):
    home = tmp_path / "home"
    _index(home)
    done = tmp_path / "released"
    holder = _holder(home, hold=3.0, repeat=1, done=done)
    res = run_process("library", "remove", "1", home=home, timeout=120)
    removed_at = time.time()
    assert holder.wait(30) == 0
    assert res.returncode == 0, res.stderr
    assert "an answer is reading document 1" in res.stderr
    assert float(done.read_text()) <= removed_at      # the answer was over before the removal ended
    listed = run_process("library", "list", home=home)
    assert "the library is empty" in listed.stdout


def test_answers_that_come_and_go_cannot_keep_a_removal_waiting(tmp_path):
    """Shared holders one after the other (as a conversation's questions are) never leave the
    document free; the removal's gate makes the next one wait instead."""
    home = tmp_path / "home"
    _index(home)
    holder = _holder(home, hold=0.3, repeat=400, done=tmp_path / "released")    # up to 2 minutes
    res = run_process("library", "remove", "1", home=home, timeout=120)
    assert res.returncode == 0, res.stderr
    out, _ = holder.communicate(timeout=60)
    assert "gone" in out            # the next "answer" found its document removed, and said so


def test_an_answer_over_a_removed_document_is_told_before_it_begins(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEWISE_HOME", str(tmp_path / "home"))
    from app.core.documents import doc_locks, listing
    from app.core.library import Library
    lib = Library()
    try:
        doc = lib.add(SAMPLE)
        listing.remove_document(lib, doc.id)
        try:
            with doc_locks.in_use(lib, [doc.id]):
                raise AssertionError("the removed document was held")
        except doc_locks.DocumentGone as gone:
            assert gone.doc_ids == [doc.id]
    finally:
        lib.close()


NESTED = """
import sys, time
from app.core.documents import doc_locks
from app.core.library import Library
lib = Library()
with doc_locks.in_use(lib, [1]):              # the CLI holds the question's documents ...
    print("holding", flush=True)
    time.sleep(2.0)                           # ... a removal starts waiting meanwhile ...
    with doc_locks.in_use(lib, [1]):          # ... and qa.ask holds them again
        print("nested", flush=True)
"""


def test_a_removal_waiting_does_not_deadlock_an_answer_that_holds_its_documents_twice(tmp_path):
    """The 200-question soak hung here: the CLI held the documents, qa.ask queued at the gate
    behind the waiting removal, and the removal waited for the CLI's hold."""
    import os
    home = tmp_path / "home"
    _index(home)
    holder = subprocess.Popen([sys.executable, "-c", NESTED], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PAGEWISE_HOME": str(home)})
    assert holder.stdout.readline().strip() == "holding"
    res = run_process("library", "remove", "1", home=home, timeout=60)     # hung for ever before
    assert res.returncode == 0, res.stderr
    out, _ = holder.communicate(timeout=30)
    assert "nested" in out and holder.returncode == 0
