"""The CLI as a user runs it (app.cli.main in this process: tests/support/cli.py): real PDFs, real engine."""
from __future__ import annotations

import json
import re
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from app.core.documents import ocr
from tests.support.cli import run_cli
from tests.support.strict import dense_ready

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("PAGEWISE_CORPUS", ROOT.parent / "shared" / "corpus"))
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"


def pagewise(*args: str, home: Path) -> subprocess.CompletedProcess:
    return run_cli(*args, home=home, env={"QT_QPA_PLATFORM": "offscreen"})


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


BAD = {  # file → words the one-line error must contain
    "zero-bytes.pdf": "empty",
    "not-a-pdf-docx.pdf": "not a pdf",
    "not-a-pdf-png.pdf": "not a pdf",
    "encrypted-user-password.pdf": "password",
    "pdfjs-encrypted-attachment.pdf": "password",
    "truncated.pdf": "damaged",
    "scanned-image-only-en.pdf": "text layer",
    "scanned-image-only-zh.pdf": "text layer",
}
if ocr.available():   # with Tesseract the scans are read by OCR (tests/core/test_ocr.py)
    BAD = {k: v for k, v in BAD.items() if not k.startswith("scanned-")}


@pytest.mark.parametrize("name,words", sorted(BAD.items()))
def test_bad_input_is_one_clean_line(home, name, words):
    res = pagewise("index", str(CORPUS / "bad" / name), home=home)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr + res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert words in lines[0].lower(), lines[0]


def test_missing_file(home):
    res = pagewise("retrieve", "no/such/file.pdf", "-q", "x", home=home)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "no/such/file.pdf" in res.stderr


def library_rows(home: Path) -> dict:
    """What the library file under PAGEWISE_HOME holds (all empty when it was never created)."""
    db = home / "data" / "library.sqlite"
    if not db.is_file():
        return {"documents": [], "pages": [], "chunks": [], "fts": 0}
    con = sqlite3.connect(db)
    try:
        return {"documents": con.execute("SELECT id, path, page_count FROM documents ORDER BY id").fetchall(),
                "pages": con.execute("SELECT DISTINCT doc_id FROM pages").fetchall(),
                "chunks": con.execute("SELECT DISTINCT doc_id FROM chunks").fetchall(),
                "fts": con.execute("SELECT count(*) FROM chunk_fts").fetchone()[0]}
    finally:
        con.close()


def test_bad_input_leaves_nothing_in_library(home):
    bad = pagewise("index", str(CORPUS / "bad" / "truncated.pdf"), home=home)
    assert bad.returncode != 0, bad.stdout
    assert library_rows(home) == {"documents": [], "pages": [], "chunks": [], "fts": 0}
    res = pagewise("index", str(SAMPLE), "--json", home=home)
    assert res.returncode == 0, res.stderr
    assert [(d["id"], d["pages"]) for d in json.loads(res.stdout)["documents"]] == [(1, 5)]
    rows = library_rows(home)            # the sample alone: nothing of the failed add is left
    assert rows["documents"] == [(1, str(SAMPLE.resolve()), 5)]
    assert rows["pages"] == rows["chunks"] == [(1,)] and rows["fts"] > 0


def test_wrong_and_right_password(home):
    enc = str(CORPUS / "bad" / "encrypted-user-password.pdf")
    wrong = pagewise("index", enc, "--password", "nope", home=home)
    assert wrong.returncode != 0 and "password" in wrong.stderr.lower()
    right = pagewise("index", enc, "--password", "corpus-user-2024", "--json", home=home)
    assert right.returncode == 0, right.stderr
    assert json.loads(right.stdout)["documents"][0]["pages"] == 5


def test_index_and_retrieve_json(home):
    res = pagewise("index", str(SAMPLE), home=home)
    assert res.returncode == 0 and "5 pages" in res.stdout
    if dense_ready():           # search vectors are computed by default (required under CI / ./run-tests)
        chunks = re.search(r"(\d+) chunks", res.stdout).group(1)        # every chunk, table rows too
        assert f"search vectors: {chunks} passages" in res.stdout, res.stdout
    res = pagewise("retrieve", str(SAMPLE), "-q", "How long does confidentiality last?", "--json", home=home)
    assert res.returncode == 0, res.stderr
    hits = json.loads(res.stdout)["hits"]
    assert hits and set(hits[0]) == {"doc", "page", "score", "text"}
    assert hits[0]["doc"] == str(SAMPLE) and 1 <= hits[0]["page"] <= 5


@pytest.mark.slow
def test_ask_json_shape_with_real_engine(home):
    res = pagewise("ask", str(SAMPLE), "-q", "Who are the parties?", "--json", home=home)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert {"answer", "citations", "mode", "engine", "timing"} <= set(out)
    assert out["mode"] in ("whole-document", "retrieval")
    assert set(out["timing"]) >= {"ttft_s", "total_s"}
    for c in out["citations"]:
        assert {"doc", "page", "quote", "verified"} <= set(c)
        assert c["doc"] == str(SAMPLE) and isinstance(c["verified"], bool)
    assert out["engine"]["name"] == "llamacpp"


def test_doctor_and_plan_json(home):
    res = pagewise("doctor", "--json", home=home)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["plan"]["engine"] == "llamacpp"      # this machine has no NVIDIA GPU
    res = pagewise("plan", "--gpu-name", "RTX 4090", "--vram-gib", "24", "--compute-capability", "8.9",
                   "--json", home=home)
    assert res.returncode == 0, res.stderr
    plan = json.loads(res.stdout)["plan"]
    assert plan["engine"] == "vllm" and plan["gpu_memory_utilization"] == pytest.approx(0.92)


def test_models_list(home):
    res = pagewise("models", "list", "--json", home=home)
    assert res.returncode == 0, res.stderr
    rows = {m["id"]: m for m in json.loads(res.stdout)["models"]}
    assert rows["smollm2-135m-q4_1"]["installed"] and rows["smollm2-135m-q4_1"]["default"]
    assert "qwen2.5-7b-instruct-awq" in rows


@pytest.mark.slow
def test_ask_prints_the_evidence_first_then_the_models_answer_under_it(home):
    """Issue 29: the cards come before the engine starts, in every output form."""
    from tests.support.cli import run_process
    question = "Which state's law governs this agreement?"
    res = run_process("ask", str(SAMPLE), "-q", question, "--stream", home=home,
                      env={"QT_QPA_PLATFORM": "offscreen"})
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert events[0]["event"] == "evidence" and events[-1]["event"] == "answer"
    assert {e["event"] for e in events[1:-1]} <= {"delta"}
    cards = events[0]["cards"]
    assert 3 <= len(cards) <= 5 and events[0]["addressed"]
    assert "governed by" in cards[0]["quote"] and cards[0]["clause"].startswith("Section 9")
    assert cards[0]["ms"] < events[-1]["timing"]["ttft_s"] * 1000     # before the model's first token
    answer = events[-1]
    assert answer["evidence"]["cards"] == cards and answer["headline"] in ("answer", "evidence")
    assert answer["headline"] == ("answer" if answer["supported"] else "evidence")
    # people read the same order: the evidence, then the model's part
    text = pagewise("ask", str(SAMPLE), "-q", question, home=home).stdout
    assert text.startswith("Evidence (found in ")
    model_part = re.search(r"^(Answer: |The model's summary is not backed by these passages)", text, re.M)
    assert model_part and text.index("[E1]") < text.index("Section 9") < model_part.start()
