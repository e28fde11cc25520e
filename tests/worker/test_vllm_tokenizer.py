"""The test checkpoints' tokenizer as vLLM's structured outputs read it: llguidance must decode
its tokens as Hugging Face does, or every JSON answer is cut.

transformers builds the GGUF's byte-level tokenizer with a sentencepiece-style decoder
(Sequence[ByteFallback, Fuse, Replace(▁→' '), ByteLevel], byte_fallback on); llguidance read
"Ġare" as the bytes "\\xc4\\xa0are", and rejected the app's own answer schemas ("forced bytes",
ParserTooComplex; Chinese at its first Han character). tests/fixtures/make_hf_smollm2.py writes
a plain ByteLevel decoder. Here a real answer schema, built by the app from real documents
(qa.whole_context, qa.answer_schema), is replayed through llguidance as vLLM builds it
(tests/support/llg_replay.py) with valid answers in English and Chinese: every token must be
accepted and the grammar must be able to end. The fixture's old decoder is replayed too, so
this test is seen to catch it.
Needs .venv-vllm (scripts/setup_vllm_cpu.sh) or PAGEWISE_VLLM_PYTHON.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.answer import qa
from tests.support.corpus import corpus_path

pytestmark = pytest.mark.slow
REPLAY = Path(__file__).resolve().parents[1] / "support" / "llg_replay.py"
SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "common-paper-mnda.pdf"
# transformers' decoder for a GGUF "gpt2" tokenizer before the fixture rewrote it (seen in vLLM 0.26's image)
OLD_DECODER = {"type": "Sequence", "decoders": [
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}


def replay(python: str, tokenizer: Path, schema: dict, answers: list[str]) -> dict:
    job = json.dumps({"tokenizer": str(tokenizer), "schema": schema, "answers": answers})
    proc = subprocess.run([python, str(REPLAY)], input=job, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tokenizer_copy(folder: Path, into: Path, decoder: dict | None = None) -> Path:
    """The checkpoint's tokenizer files alone (vLLM's loader reads them), with `decoder` if given."""
    into.mkdir()
    for f in folder.iterdir():
        if f.name.startswith("tokenizer") or f.name in ("special_tokens_map.json", "chat_template.jinja", "config.json"):
            shutil.copy(f, into / f.name)
    if decoder is not None:
        data = json.loads((into / "tokenizer.json").read_text(encoding="utf-8"))
        data["decoder"], data["model"]["byte_fallback"] = decoder, True
        (into / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return into


def app_schema(lib, path: Path, question: str) -> tuple[dict, list[str]]:
    """The schema the app sends for `question` over the whole of `path` (as build_prompt makes it)."""
    refs = [qa.DocRef(1, lib.add(path).id, str(path))]
    schema = qa.answer_schema(qa.whole_context(lib, refs), question)
    return schema, schema["properties"]["citations"]["items"]["properties"]["quote"]["enum"]


def compact(answer: str, quote: str, page: int) -> str:
    """A valid reply as the engine writes it under disable_any_whitespace: compact, keys in order."""
    return json.dumps({"answer": answer, "citations": [{"doc": 1, "page": page, "quote": quote}]},
                      ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[tuple[str, dict, list[str]]]:
    """(language, schema, valid answers) for an English contract and a Chinese law."""
    from app.core.library import Library
    lib = Library(tmp_path_factory.mktemp("lib") / "library.sqlite")
    try:
        en, en_quotes = app_schema(lib, SAMPLE, "Can either party end this agreement early?")
        zh, zh_quotes = app_schema(lib, corpus_path("contracts-zh/electronic-signature-law.pdf"),
                                   "可靠的电子签名与手写签名具有同等法律效力吗？")
    finally:
        lib.close()
    termination = next(q for q in en_quotes if "terminate" in q)
    equal = next((q for q in zh_quotes if "同等的法律效力" in q), zh_quotes[0])
    return [("en", en, [compact("Yes. Either party may terminate it for any or no reason upon written notice.",
                                termination, 3),
                        compact("The document does not say.", en_quotes[0], 1)]),
            ("zh", zh, [compact("是的，可靠的电子签名与手写签名或者盖章具有同等的法律效力。", equal, 4),
                        compact("文件没有规定。", zh_quotes[-1], 1)])]


def test_the_apps_schemas_accept_valid_answers_through_llguidance(vllm_py, hf_smollm2, cases, tmp_path):
    tok = json.loads((hf_smollm2 / "tokenizer.json").read_text(encoding="utf-8"))
    assert tok["decoder"]["type"] == "ByteLevel" and not tok["model"].get("byte_fallback")
    folder = tokenizer_copy(hf_smollm2, tmp_path / "tok")
    for lang, schema, answers in cases:
        assert len(schema["properties"]["citations"]["items"]["properties"]["quote"]["enum"]) > 20
        result = replay(vllm_py, folder, schema, answers)
        print(f"{lang}: grammar built in {result['build_s']} s; {result['answers']}")
        for answer, got in zip(answers, result["answers"]):
            assert got["decoded"], f"the tokenizer does not round-trip {answer!r}"
            assert got["accepted"] == got["tokens"] and got["accepting"], (lang, answer, got)


def test_the_old_fixture_decoder_is_rejected_as_before(vllm_py, hf_smollm2, cases, tmp_path):
    """The decoder transformers wrote: llguidance rejects the same valid answers (the bug this
    test keeps away; if llguidance learns to read it, this says so)."""
    folder = tokenizer_copy(hf_smollm2, tmp_path / "old", decoder=OLD_DECODER)
    rejected = 0
    for _lang, schema, answers in cases:
        result = replay(vllm_py, folder, schema, answers)
        rejected += sum(got["accepted"] < got["tokens"] or not got["accepting"] for got in result["answers"])
    assert rejected == sum(len(answers) for _l, _s, answers in cases)
