"""The Evidence block says how its cards were chosen: by the search alone, before the model reads
anything, or by the model judging the candidates (judge_cards); in English and in 中文."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from app.core.answer.evidence import find_evidence
from app.core.library import Library
from app.qt import catalogue_zh
from app.qt.evidence_view import evidence_html
from tests.support.refs import refs_for

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "common-paper-mnda.pdf"


def test_judged_cards_say_the_model_chose_them_and_the_chinese_interface_translates_it(tmp_path):
    lib = Library(tmp_path / "library.sqlite")
    evidence = find_evidence(lib, refs_for(lib, SAMPLE), "How long do the confidentiality obligations last?")
    assert evidence.addressed and evidence.cards
    searched = evidence_html(0, evidence)
    judged = evidence_html(0, dataclasses.replace(evidence, judged=True))
    assert "before the model reads anything" in searched and "chosen by the model" not in searched
    assert "then chosen by the model as the likeliest to answer" in judged
    line = judged.split("font-size:small; margin:0 0 4px 0'>")[1].split("</p>")[0]
    assert catalogue_zh.lookup(line) == f"用时 {evidence.ms / 1000:.2f} 秒找到，再由模型选出最可能回答问题的段落"


def test_cards_found_again_with_the_model_s_wording_say_so_in_english_and_chinese(tmp_path):
    lib = Library(tmp_path / "library.sqlite")
    evidence = find_evidence(lib, refs_for(lib, SAMPLE), "How long do the confidentiality obligations last?")
    reworded = evidence_html(0, dataclasses.replace(evidence, rewritten="The obligations last for two years."))
    assert "then again with the model's wording of the question" in reworded
    line = reworded.split("font-size:small; margin:0 0 4px 0'>")[1].split("</p>")[0]
    assert catalogue_zh.lookup(line) == f"用时 {evidence.ms / 1000:.2f} 秒找到，再按模型改写的问题重新查找"
