"""The real-model lane (scripts/real_models.py): the Qwen2.5-Coder 1.5B assembled from the package
index, imported as a user imports a model, and asked about the bundled sample as a user asks.

Skipped, with the command that makes it run, while the model is not assembled; with
PAGEWISE_REAL_MODELS=1 a missing model is a failure instead (a lane that must run)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from benchmarks.judge import judge
from tests.e2e.test_cli import SAMPLE, pagewise

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
MODEL = "qwen-coder-1.5b"


def _lane():
    spec = importlib.util.spec_from_file_location("real_models", ROOT / "scripts" / "real_models.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("real_models", module)      # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _assembled(model_id: str) -> Path:
    lane = _lane()
    path = lane.path_of(model_id)
    if path.is_file() and path.stat().st_size == lane.BY_ID[model_id].size:
        return path
    why = f"{model_id} is not assembled: run `python scripts/real_models.py --only {model_id}`"
    if os.environ.get("PAGEWISE_REAL_MODELS") == "1":
        pytest.fail(why + " (PAGEWISE_REAL_MODELS=1)", pytrace=False)
    pytest.skip(why)


def test_assembled_file_is_the_recorded_model():
    lane = _lane()
    path = _assembled(MODEL)
    assert lane.is_ready(lane.BY_ID[MODEL]), f"{path}: SHA-256 is not the recorded one"
    assert lane.check_header(lane.BY_ID[MODEL], path).startswith("Qwen2.5 Coder 1.5B Instruct")


def test_sample_question_answered_right_with_a_supporting_citation(tmp_path):
    path = _assembled(MODEL)
    home = tmp_path / "home"
    res = pagewise("models", "import", str(path), "--id", MODEL, "--json", home=home)
    assert res.returncode == 0, res.stderr
    question = "How long is Confidential Information protected under this agreement?"
    res = pagewise("ask", str(SAMPLE), "-q", question, "--model", MODEL, "--json", home=home)
    assert res.returncode == 0, res.stderr
    ans = json.loads(res.stdout)
    verdict = judge(question, "1 year from the Effective Date; trade secrets until they are no longer trade secrets.",
                    ans["answer"])
    assert verdict.right, f"{ans['answer']!r}: {verdict.why}"
    assert ans["headline"] == "answer", f"demoted: {ans['answer']!r} with {ans['citations']}"
    backing = [c for c in ans["citations"] if c["verified"] and c["support"] == "supports"]
    assert backing, f"no verified citation supports {ans['answer']!r}: {ans['citations']}"
    assert any("1 year" in c["quote"] or "Term of Confidentiality" in c["quote"] for c in backing), backing
