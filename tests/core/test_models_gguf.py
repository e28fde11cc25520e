"""GGUF and AWQ checks before import, verify and load (issue 15 point 11): every kind of damaged
file is refused with a one-line reason, and nothing of it lands in the models folder."""
from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from app.core import paths
from app.core.models import catalogue as models
from app.core.models import checkpoint, gguf, importer
from tests.support.tiny_gguf import write_tiny_gguf

EMBEDDED = models.local_path(models.load_catalogue(imported=False).default)


def _tensor_field(data: bytes, name: bytes) -> tuple[int, int]:
    """Byte positions of a tensor's type and offset fields in its tensor-table entry."""
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    type_at = at + 4 + 8 * n_dims
    return type_at, type_at + 4


def _patch(data: bytes, at: int, raw: bytes) -> bytes:
    return data[:at] + raw + data[at + len(raw):]


def _mutations(good: bytes) -> dict[str, tuple[bytes, str]]:
    """name → (damaged bytes, words the one-line reason must contain)."""
    q_type, q_offset = _tensor_field(good, b"blk.0.attn_q.weight")
    return {
        "zero bytes": (b"", "empty file"),
        "random bytes": (random.Random(7).randbytes(4096), "not a gguf file"),
        "bad magic": (b"GGUG" + good[4:], "not a gguf file"),
        "bad version": (_patch(good, 4, struct.pack("<I", 99)), "version 99"),
        "big-endian version": (_patch(good, 4, struct.pack(">I", 3)), "big-endian"),
        "tensor count beyond the file": (_patch(good, 8, struct.pack("<Q", 1 << 40)), "more than"),
        "truncated in the metadata": (good[:400], "past the end of the file"),
        "truncated in the weights": (good[:-1000], "past the end of the file"),
        "tensor offset past the end": (_patch(good, q_offset, struct.pack("<Q", 1 << 32)), "past the end"),
        "unknown tensor type": (_patch(good, q_type, struct.pack("<I", 99)), "unknown type 99"),
        "overlapping tensors": (_patch(good, q_offset, struct.pack("<Q", 0)), "overlap"),
        "no architecture": (good.replace(b"general.architecture", b"general.architecturz"), "architecture"),
        "no tokenizer vocabulary": (good.replace(b"tokenizer.ggml.tokens", b"tokenizer.ggml.tokenz"), "tokenizer"),
    }


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> bytes:
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf").read_bytes()


def test_a_good_file_reads_with_its_geometry(tmp_path, tiny):
    info = gguf.read(write_tiny_gguf(tmp_path / "t.gguf"))
    assert (info.architecture, info.context_length, info.block_count, info.head_count_kv, info.head_dim) == \
        ("llama", 256, 1, 1, 16)
    assert info.tokenizer == "gpt2" and info.vocab_size == 3 and len(info.tensors) == 2


def test_the_embedded_model_reads_fast_with_its_real_metadata():
    import time
    began = time.perf_counter()
    info = gguf.read(EMBEDDED)
    assert time.perf_counter() - began < 2.0     # the gguf package's GGUFReader takes ~6 s here
    assert (info.architecture, info.quantisation, info.context_length, info.block_count,
            info.head_count_kv, info.head_dim, info.vocab_size) == ("llama", "Q4_1", 8192, 30, 3, 64, 49152)
    assert 0.13e9 < info.params < 0.14e9


@pytest.mark.parametrize("case", [
    "zero bytes", "random bytes", "bad magic", "bad version", "big-endian version",
    "tensor count beyond the file", "truncated in the metadata", "truncated in the weights",
    "tensor offset past the end", "unknown tensor type", "overlapping tensors", "no architecture",
    "no tokenizer vocabulary"])
def test_damaged_files_are_refused_in_one_line_and_never_imported(tmp_path, tiny, case):
    data, words = _mutations(tiny)[case]
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(data)
    with pytest.raises(gguf.GgufError) as info:
        gguf.read(bad)
    message = str(info.value)
    assert words in message.lower() and "\n" not in message and message.startswith("bad.gguf: ")
    with pytest.raises(gguf.GgufError):
        importer.import_model(bad)
    imported = paths.models_dir() / models.IMPORTED
    assert not imported.exists() or not any(imported.iterdir())
    assert "bad" not in {m.id for m in models.load_catalogue().models}


def test_a_half_length_copy_of_the_real_model_is_refused(tmp_path):
    half = tmp_path / "half.gguf"
    with open(EMBEDDED, "rb") as src:
        half.write_bytes(src.read(EMBEDDED.stat().st_size // 2))
    with pytest.raises(gguf.GgufError) as info:
        importer.import_model(half)
    assert "past the end of the file" in str(info.value) and "\n" not in str(info.value)


def test_verify_finds_an_imported_model_cut_to_half_length(tmp_path):
    copy = tmp_path / "smol-copy.gguf"
    copy.write_bytes(EMBEDDED.read_bytes())
    spec = importer.import_model(copy)
    assert models.verify(spec) == []
    target = models.local_path(spec)
    with open(target, "r+b") as fh:
        fh.truncate(target.stat().st_size // 2)
    problems = models.verify(spec)
    assert len(problems) == 1 and "past the end of the file" in problems[0], problems


def test_verify_checks_the_full_sha256_against_the_catalogue(tmp_path):
    spec = importer.import_model(write_tiny_gguf(tmp_path / "t.gguf"))
    target = models.local_path(spec)
    raw = bytearray(target.read_bytes())
    raw[-1] ^= 0xFF                  # one weight byte: the header still reads, the hash does not
    target.write_bytes(bytes(raw))
    assert gguf.read(target)
    assert ["t.gguf: SHA-256 mismatch (file damaged or wrong version)"] == models.verify(spec)


# --- AWQ folders ----------------------------------------------------------------------------------
def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    header, blobs, at = {}, b"", 0
    for name, (dtype, shape) in tensors.items():
        n = int(np.prod(shape)) * {"I32": 4, "F16": 2}[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + n]}
        blobs += b"\0" * n
        at += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + blobs)


def write_awq_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM"], "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "hidden_size": 64, "max_position_embeddings": 4096,
        "quantization_config": {"quant_method": "awq", "bits": 4}}))
    (folder / "tokenizer.json").write_text("{}")
    for n in (1, 2):
        _safetensors(folder / f"model-0000{n}-of-00002.safetensors",
                     {f"layers.{n}.qweight": ("I32", [64, 8]), f"layers.{n}.scales": ("F16", [1, 64])})
    (folder / checkpoint.INDEX).write_text(json.dumps({"weight_map": {
        "layers.1.qweight": "model-00001-of-00002.safetensors",
        "layers.2.qweight": "model-00002-of-00002.safetensors"}}))
    return folder


def test_an_awq_folder_imports_with_its_geometry(tmp_path):
    spec = importer.import_model(write_awq_folder(tmp_path / "tiny-awq"))
    assert (spec.format, spec.engine, spec.layers, spec.kv_heads, spec.head_dim, spec.native_context) == \
        ("awq", "vllm", 2, 2, 16, 4096)
    assert models.verify(spec) == [] and models.local_path(spec).is_dir()


@pytest.mark.parametrize("damage, words", [
    (lambda f: (f / "config.json").write_text(json.dumps({"num_hidden_layers": 2})), "not 'awq'"),
    (lambda f: (f / "tokenizer.json").unlink(), "no tokenizer"),
    (lambda f: (f / "model-00002-of-00002.safetensors").unlink(), "shard model-00002-of-00002.safetensors is missing"),
    (lambda f: (f / "model-00001-of-00002.safetensors").write_bytes(
        (f / "model-00001-of-00002.safetensors").read_bytes()[:-100]), "outside the file"),
    (lambda f: (f / "model-00001-of-00002.safetensors").write_bytes(b"\xff" * 16), "header claims"),
])
def test_damaged_awq_folders_are_refused(tmp_path, damage, words):
    folder = write_awq_folder(tmp_path / "awq")
    damage(folder)
    with pytest.raises(checkpoint.CheckpointError) as info:
        importer.import_model(folder)
    assert words in str(info.value) and "\n" not in str(info.value)


# --- ids that clean to nothing, modes, pipes (issue 32, points 1, 8, 17) -------------------------
@pytest.mark.parametrize("bad_id", ["模型", "???", "..", "-.-"])
def test_an_id_that_cleans_to_nothing_is_refused_and_keeps_the_imported_models(tmp_path, bad_id):
    kept = importer.import_model(write_tiny_gguf(tmp_path / "kept.gguf"))
    with pytest.raises(models.ModelNotAvailable) as info:
        importer.import_model(write_tiny_gguf(tmp_path / "mine.gguf"), model_id=bad_id)
    assert "--id" in str(info.value) and "\n" not in str(info.value)
    assert models.local_path(kept).is_file()
    assert models.verify(models.load_catalogue().get(kept.id)) == []


def test_imported_models_are_0600_in_0700_folders(tmp_path):
    import os
    import stat
    old = os.umask(0o022)
    try:
        spec = importer.import_model(write_tiny_gguf(tmp_path / "t.gguf"))
        awq = importer.import_model(write_awq_folder(tmp_path / "tiny-awq"))
    finally:
        os.umask(old)
    root = paths.models_dir() / models.IMPORTED
    for path in [root, *root.rglob("*")]:
        want = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == want, (path, oct(path.stat().st_mode))
    assert models.local_path(spec).is_file() and awq.id


def test_a_fifo_is_refused_as_not_a_file_without_hanging(tmp_path):
    import os
    fifo = tmp_path / "pipe.gguf"
    os.mkfifo(fifo)
    with pytest.raises(models.ModelNotAvailable) as info:
        importer.import_model(fifo)
    assert "not a regular file" in str(info.value)
