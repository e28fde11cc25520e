"""CI smoke runs of the benchmarks: each runs on a small input (--quick), prints its figures
and writes its JSON. Benchmarks are not tests of speed: only that they run and report."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.strict import need_module

ROOT = Path(__file__).resolve().parents[1]


def bench(script: str, *args: str, timeout_s: int = 600) -> str:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout_s)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def result(folder: Path, name: str) -> dict:
    path = folder / f"{name}.json"
    assert path.is_file(), f"{name}.json was not written"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ingest_run(corpus, tmp_path_factory):
    """One quick ingestion run, shared by its own test and the report's."""
    folder = tmp_path_factory.mktemp("bench-ingest")
    return folder, bench("ingest.py", "--quick", "--out", str(folder))


def test_ingest_quick(ingest_run):
    folder, out = ingest_run
    data = result(folder, "ingest")
    assert [r["input"] for r in data["results"]] == ["corpus", "generated 40-page PDF"]
    for r in data["results"]:
        assert r["pages"] > 0 and r["ours_pages_per_s"] > 0 and r["bare_pages_per_s"] > 0
        assert r["ours_peak_rss_mb"] > 10 and r["bare_peak_rss_mb"] > 10
    assert data["results"][1]["pages"] == 40
    assert "pages/s" in out and "ratio" in out


@pytest.mark.slow
def test_latency_quick(corpus, tmp_path):
    out = bench("latency.py", "--quick", "--out", str(tmp_path))
    data = result(tmp_path, "latency")
    assert data["same_prompt"], "the in-process side must get the app's exact messages"
    assert data["document"]["mode"] == "whole-document"
    r = data["rounds"][0]
    for kind in ("first", "follow-up", "restart"):
        assert r["ours"][kind]["ttft_s"] > 0 and r["inproc"][kind]["ttft_s"] > 0
        assert r["ours"][kind]["prompt_tokens"] == r["inproc"][kind]["prompt_tokens"]
    # the follow-up and the restarted worker reuse the document's KV state (memory, then disk)
    assert r["ours"]["follow-up"]["cached_tokens"] > 0 and r["ours"]["restart"]["cached_tokens"] > 0
    assert "TTFT" in out


@pytest.mark.slow
def test_quality_quick(corpus, tmp_path):
    out = bench("quality.py", "--quick", "--out", str(tmp_path))
    data = result(tmp_path, "quality")
    assert data["asked"] == 1 and len(data["questions"]) == 1
    rec = data["retrieval"]["in-document"]["ours"]
    assert rec["all"]["n"] > 0 and 0 <= rec["all"]["r5"] <= 1
    assert "recall@1" in out and "verified" in out


@pytest.mark.slow
def test_app_start_quick(tmp_path):
    need_module("PySide6", "a dependency")
    out = bench("app_start.py", "--quick", "--out", str(tmp_path))
    s = result(tmp_path, "app_start")["summary"]
    assert not s["errors"], s["errors"]
    assert 0 < s["app_shown_s"] < s["app_ready_s"]
    assert s["gui_rss_mb"] > 20 and s["worker_rss_mb"] > 20
    assert "window shown" in out


def test_report_from_results(ingest_run, tmp_path):
    folder, _ = ingest_run
    docs = tmp_path / "docs"
    bench("report.py", "--in", str(folder), "--docs", str(docs))
    md = (docs / "benchmarks.md").read_text(encoding="utf-8")
    assert "## 1. Ingestion" in md and "Not run" in md     # the others were not run here
    assert "bare PyMuPDF" in md


def test_compare_clauses_quick(corpus, tmp_path):
    out = bench("compare_clauses.py", "--quick", "--out", str(tmp_path))
    data = result(tmp_path, "compare_clauses")
    assert "request → table" in out and data["pairs"] == 1 and data["p50_ms"] > 0
    assert set(data["ours"]) == {"tune", "check"} and "on_topic" in data["baseline"]["tune"]


@pytest.mark.slow
def test_answer_language_quick(corpus, tmp_path):
    out = bench("answer_language.py", "--quick", "--out", str(tmp_path))
    data = result(tmp_path, "answer_language")
    assert len(data["rows"]) == 1 and {"ours", "baseline"} <= set(data["rows"][0])
    assert data["rows"][0]["ours"]["chinese"]          # the grammar holds the first letter to Han
    assert "in Chinese" in out


def test_diff_quick(corpus, tmp_path):
    out = bench("diff.py", "--quick", "--out", str(tmp_path))
    data = result(tmp_path, "diff")
    assert "changed clauses against the sources' own change list" in out and data["pairs"]
    assert data["renumbered"]["gold"] >= 40 and data["p50_s"] > 0 and min(data["pages"]) >= 28


def test_compare_many_quick(corpus, tmp_path):
    out = bench("compare_many.py", "--quick", "--out", str(tmp_path))
    data = result(tmp_path, "compare_many")
    assert "request → table" in out and data["documents"] == 3 and data["cells"] == 15
    assert data["verified_on_page"] == data["found"] > 0


def test_evidence_replay_chooses_the_judges_prior_from_recorded_odds(tmp_path):
    """evidence.py --replay: a --judge run's candidates re-ordered with each prior, no model."""
    def row(qid, margins, gold_at):
        cands = [{"page": [1, i + 1], "gold_page": i == gold_at, "sentence": i == gold_at, "margin": m}
                 for i, m in enumerate(margins)]
        return {"id": qid, "groups": ["en"], "answerable": True, "addressed": True, "candidates": cands,
                "first": False, "at3": False, "at5": False, "sentence": False}
    # the model is sure of the sixth candidate: only a small prior keeps it in the five cards
    rows = [row(f"q{n}", [0.0, 0.0, 0.0, 0.0, 0.0, 0.6], 5) for n in range(4)]
    path = tmp_path / "judged.json"
    path.write_text(json.dumps({"judged": {"rows": rows}, "halves": {f"q{n}": ("tune", "check")[n % 2]
                                                                     for n in range(4)}}), encoding="utf-8")
    out = bench("evidence.py", "--replay", str(path))
    assert "chosen on the checking halves: prior 0.0, distinct 0" in out
    assert "check  en" in out and "tune   en" in out


def test_a_failed_ask_keeps_its_worker_logs_beside_the_results(tmp_path, monkeypatch):
    """answers.py: an ask that fails (an engine that died twice on the GPU) leaves the tail of its
    worker logs in out/bench/failed-asks/, since the ask's home is temporary."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import answers
    import common
    monkeypatch.setattr(common, "OUT", tmp_path / "bench")
    home = tmp_path / "home"
    (home / "data" / "logs").mkdir(parents=True)
    (home / "data" / "logs" / "worker-llamacpp.log").write_text(
        "\n".join(f"line {n}" for n in range(1000)) + "\nCUDA error: an illegal memory access\n", encoding="utf-8")
    answers.keep_worker_logs(home, "the engine failed again after a restart")
    kept = list((tmp_path / "bench" / "failed-asks").glob("*-worker-llamacpp.log"))
    assert len(kept) == 1
    text = kept[0].read_text(encoding="utf-8").splitlines()
    assert text[0] == "# the engine failed again after a restart" and text[-1].startswith("CUDA error")
    assert len(text) == 401
