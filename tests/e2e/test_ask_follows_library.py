"""Issue 32: one `pagewise ask` conversation while another process removes one of its documents
and indexes it again (real engine, real processes). Before, the next question failed with
"document 1 has no page 5" and the conversation ended (rc 1); now the removal waits for the
answer under way, the conversation leaves the document out while it is gone and follows it to
its new id when it comes back, and every question is answered."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.cli import ROOT, run_process
from tests.support.corpus import corpus_path

pytestmark = pytest.mark.slow


def test_a_conversation_survives_its_document_removed_and_added_again(tmp_path):
    home = tmp_path / "home"
    nda = corpus_path("contracts-en/common-paper-mnda.pdf")
    csa = corpus_path("contracts-en/common-paper-csa.pdf")
    questions = ["Who are the parties?", "How long does confidentiality last?",
                 "Which law governs the agreement?", "Can the agreement be terminated?"]
    argv = [sys.executable, "-m", "app", "ask", str(nda), str(csa), "--stream"]
    for q in questions:
        argv += ["-q", q]
    env = {**os.environ, "PAGEWISE_HOME": str(home)}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers, removed = 0, None
    for line in proc.stdout:
        event = json.loads(line)
        assert "error" not in event, event
        if event.get("event") != "answer":
            continue
        answers += 1
        if answers == 1:        # the NDA removed from another process, then added again
            removed = run_process("library", "remove", "1", home=home, timeout=900)
            assert removed.returncode == 0, removed.stderr
            added = run_process("index", str(nda), "--no-dense", home=home, timeout=300)
            assert added.returncode == 0, added.stderr
    err = proc.stderr.read()
    assert proc.wait(timeout=900) == 0, err[-2000:]
    assert answers == len(questions)
    assert "added to the library again" in err or "was removed from the library" in err, err[-2000:]
    listed = json.loads(run_process("library", "list", "--json", home=home).stdout)
    ids = sorted(d["id"] for d in listed["documents"])
    assert ids == [2, 3]                # the NDA is back under a new id; ids are never reused
