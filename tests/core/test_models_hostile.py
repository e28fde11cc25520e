"""Model ids, file names, hashes and hub answers that try to reach outside the models folder.

Before: an entry whose id is ".." made `models remove ..` delete the data folder, library
included (model_dir joined the id into a path, remove() rmtree'd it); imported entries listing
"../…" or absolute file names were listed as intact; a hub ETag "/../../x" placed the temporary
file outside the model's folder; a non-hex ETag let any file be accepted; the hub token followed
a redirect to another host; 40 GB announced on a small disk ended in a raw ENOSPC.
"""
from __future__ import annotations

import hashlib
import textwrap

import pytest
import tomli_w

from app.core import paths
from app.core.models import catalogue as models
from app.core.models import download
from tests.support.local_hub import serve_folder
from tests.support.tiny_gguf import write_tiny_gguf

ENTRY = dict(name="x", format="gguf", source="hf", repo="acme/tiny-GGUF", size_gb=0.0001, params_b=0.001,
             native_context=512, layers=1, kv_heads=1, head_dim=8, licence="MIT")


def catalogue_with(tmp_path, **entry) -> models.Catalogue:
    path = tmp_path / "models.toml"
    path.write_text(tomli_w.dumps({"model": [{**ENTRY, "files": ["tiny.gguf"], **entry}]}))
    return models.load_catalogue(path, imported=False)


@pytest.mark.parametrize("bad_id", ["..", ".", "../library", "/etc", "a/b", "", ".hidden", "a\\b", "x" * 200])
def test_an_id_that_is_not_one_folder_name_is_refused(tmp_path, bad_id):
    with pytest.raises(models.CatalogueError) as caught:
        catalogue_with(tmp_path, id=bad_id)
    assert "not a folder name" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("bad_file", ["../escape.gguf", "/etc/passwd", "a/../../b.gguf", "C:evil.gguf",
                                      "dir//x", "", "..\\x", "ok/./x"])
def test_a_file_name_outside_the_models_folder_is_refused(tmp_path, bad_file):
    with pytest.raises(models.CatalogueError) as caught:
        catalogue_with(tmp_path, id="tiny", files=[bad_file])
    assert "not a relative name inside its folder" in str(caught.value)


@pytest.mark.parametrize("bad_hash", ["xyz", "A" * 64, "0" * 63, "g" * 64])
def test_a_hash_that_is_not_a_sha256_is_refused(tmp_path, bad_hash):
    with pytest.raises(models.CatalogueError, match="64 lowercase hex"):
        catalogue_with(tmp_path, id="tiny", sha256={"tiny.gguf": bad_hash})


def test_remove_never_deletes_outside_one_models_folder(tmp_path):
    library = paths.library_path()
    library.write_bytes(b"the library")
    for bad in ("..", "."):                        # a spec built without the catalogue's checks
        spec = models.ModelSpec(id=bad, **{k: v for k, v in ENTRY.items()}, files=("tiny.gguf",))
        with pytest.raises(models.CatalogueError):
            models.remove(spec)
    with pytest.raises(models.CatalogueError):
        models.remove_tree(paths.models_dir() / models.IMPORTED)
    with pytest.raises(models.CatalogueError):
        models.remove_tree(paths.models_dir() / "x" / ".." / "..")
    assert library.read_bytes() == b"the library"


def imported_entry(model_id: str, files: list[str], tmp_path):
    folder = paths.models_dir() / models.IMPORTED / model_id
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.gguf"
    write_tiny_gguf(outside)
    entry = {**ENTRY, "id": model_id, "source": "local", "files": files}
    entry.pop("repo")
    (folder / models.MANIFEST).write_text(tomli_w.dumps(entry))
    return outside


@pytest.mark.parametrize("files", [["../../../../outside.gguf"], ["/tmp/outside.gguf"]])
def test_an_imported_entry_listing_files_outside_its_folder_is_not_listed(tmp_path, files):
    outside = imported_entry("sneaky", [f.replace("/tmp/outside.gguf", str(tmp_path / "outside.gguf"))
                                        for f in files], tmp_path)
    assert outside.is_file()
    ids = [m.id for m in models.load_catalogue().models]
    assert "sneaky" not in ids


def _tiny_spec(tmp_path, sha: str | None = None):
    path = tmp_path / "models.toml"
    sha_line = f'sha256 = {{ "tiny.gguf" = "{sha}" }}\n' if sha else ""
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
    return models.load_catalogue(path, imported=False).get("tiny")


def _hub(tmp_path, **hub):
    src = tmp_path / "hub"
    src.mkdir(exist_ok=True)
    write_tiny_gguf(src / "tiny.gguf")
    return serve_folder(src, "acme/tiny-GGUF", **hub)


def test_a_hub_etag_cannot_place_the_download_outside_the_models_folder(tmp_path):
    spec = _tiny_spec(tmp_path)
    data = paths.data_dir()
    before = {p for p in data.parent.rglob("*")}
    server, url = _hub(tmp_path, etag="/../../../../x")
    try:
        with pytest.raises(models.ModelNotAvailable) as caught:
            download.pull(spec, endpoint=url)          # its ETag is no hash: nothing to verify it by
    finally:
        server.shutdown()
    assert "no hash to check it against" in str(caught.value)
    model_folder = models.model_dir(spec).resolve()
    new = {p for p in data.parent.rglob("*")} - before
    assert all(p.resolve() == model_folder or p.resolve().is_relative_to(model_folder) or p.is_dir()
               for p in new), sorted(map(str, new))
    assert not any(p.name.endswith(".part") and not p.resolve().is_relative_to(model_folder) for p in new)


def test_a_non_hex_etag_does_not_verify_a_file(tmp_path):
    spec = _tiny_spec(tmp_path)
    server, url = _hub(tmp_path, etag="not-a-hash")
    try:
        with pytest.raises(models.ModelNotAvailable, match="no hash to check it against"):
            download.pull(spec, endpoint=url)
    finally:
        server.shutdown()
    assert not models.is_available(spec)


def test_a_git_object_id_etag_verifies_a_small_file(tmp_path):
    src = tmp_path / "hub"
    src.mkdir()
    payload = write_tiny_gguf(src / "tiny.gguf").read_bytes()
    git_id = hashlib.sha1(f"blob {len(payload)}\0".encode() + payload).hexdigest()
    spec = _tiny_spec(tmp_path)
    server, url = serve_folder(src, "acme/tiny-GGUF", etag=git_id)
    try:
        assert download.pull(spec, endpoint=url).read_bytes() == payload
    finally:
        server.shutdown()


def test_the_hub_token_never_follows_a_redirect_to_another_host(tmp_path):
    spec = _tiny_spec(tmp_path)
    cdn, cdn_url = _hub(tmp_path)
    other_host = cdn_url.replace("127.0.0.1", "localhost")     # another host name, as a CDN's is
    hub, hub_url = _hub(tmp_path, redirect_to=other_host)
    try:
        path = download.pull(spec, endpoint=hub_url, token="hf_secret_token")
    finally:
        hub.shutdown()
        cdn.shutdown()
    assert path.is_file()
    assert hub.auth and all(a == "Bearer hf_secret_token" for a in hub.auth)     # the hub itself: yes
    assert cdn.auth and not any(a and "hf_secret_token" in a for a in cdn.auth)   # elsewhere: never


def test_a_download_larger_than_the_free_space_is_one_line_before_writing(tmp_path, monkeypatch):
    spec = _tiny_spec(tmp_path)
    server, url = _hub(tmp_path)
    monkeypatch.setattr(download, "SPARE_BYTES", 1 << 62)       # as if the disk had no room left
    try:
        with pytest.raises(download.NoRoom) as caught:
            download.pull(spec, endpoint=url)
    finally:
        server.shutdown()
    assert "GB free" in str(caught.value) and "\n" not in str(caught.value)
    assert not list(models.model_dir(spec).rglob("*.part")) or all(
        p.stat().st_size == 0 for p in models.model_dir(spec).rglob("*.part"))
