"""Data at rest: every file the app keeps (library and its -wal/-shm, logs, settings, plan history,
KV cache, the vLLM key) is 0600 in a 0700 folder whatever the umask, and a looser file left by an
earlier version is tightened; the PDF password need not show in `ps` (issue 15, point 9)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import run_process
from tests.support.corpus import corpus_path
from tests.support.private_files import loose, mode

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"


@pytest.fixture
def umask_022():
    old = os.umask(0o022)                     # the usual default: files 0644, folders 0755
    yield
    os.umask(old)


def pagewise(*args: str, home: Path, stdin: str | None = None, env: dict | None = None, timeout: float = 600):
    return run_process(*args, home=home, env=env, stdin=stdin, timeout=timeout,
                       preexec_fn=lambda: os.umask(0o022))


def test_app_folders_are_private_and_tightened(pagewise_home, umask_022):
    from app.core import paths
    (pagewise_home / "data").mkdir(mode=0o755)               # left by an earlier version
    for folder in (paths.config_dir(), paths.data_dir(), paths.cache_dir(), paths.log_dir(),
                   paths.kv_cache_dir(), paths.models_dir()):
        assert mode(folder) == 0o700, folder


def test_library_file_and_its_wal_and_shm_are_0600(tmp_path, umask_022):
    from app.core.library import schema
    con = schema.connect(tmp_path / "lib" / "library.sqlite")
    con.execute("INSERT INTO exchanges (doc_key, question, answer_json, created_at) VALUES ('1', 'q', '{}', 0)")
    names = sorted(p.name for p in (tmp_path / "lib").iterdir())
    assert names == ["library.sqlite", "library.sqlite-shm", "library.sqlite-wal"]
    assert loose(tmp_path) == []
    con.close()


def test_looser_library_files_from_before_are_tightened(tmp_path, umask_022):
    from app.core.library import schema
    path = tmp_path / "library.sqlite"
    schema.connect(path).close()
    for p in tmp_path.iterdir():
        os.chmod(p, 0o644)
    con = schema.connect(path)
    assert all(mode(p) == 0o600 for p in tmp_path.iterdir()), [(p.name, oct(mode(p))) for p in tmp_path.iterdir()]
    con.close()


def test_atomic_write_is_0600_even_over_a_looser_file(tmp_path, umask_022):
    from app.core.settings import atomic_write
    target = tmp_path / "cfg" / "plan_history.json"
    atomic_write(target, "{}")
    assert mode(target) == 0o600 and mode(target.parent) == 0o700
    os.chmod(target, 0o666)
    atomic_write(target, '{"a": 1}')
    assert mode(target) == 0o600 and target.read_text() == '{"a": 1}'


@pytest.mark.slow
def test_index_and_ask_leave_only_private_files(tmp_path):
    """A real CLI run under umask 022: library, logs, settings, plan history, KV cache."""
    home = tmp_path / "home"
    assert pagewise("settings", "set", "threads", "2", home=home).returncode == 0
    # a generous first-token budget: the prompt is then long enough to be kept on disk however
    # busy the machine is (a budget from a slow measurement gave a 400-token prompt, not kept)
    assert pagewise("settings", "set", "first_token_budget_s", "60", home=home).returncode == 0
    res = pagewise("index", str(SAMPLE), "--no-dense", home=home)
    assert res.returncode == 0, res.stderr
    res = pagewise("ask", str(SAMPLE), "-q", "Who are the parties?", "--json", home=home)
    assert res.returncode == 0, res.stderr
    files = {p.name for p in home.rglob("*") if p.is_file()}
    assert {"library.sqlite", "pagewise.log", "settings.toml"} <= files, files
    assert any(name.endswith(".tok") for name in files), files        # the KV cache was written
    assert loose(home) == []


def test_password_from_stdin_or_environment_not_argv(tmp_path):
    """--password shows in `ps`; --password-stdin and PAGEWISE_PDF_PASSWORD do not."""
    pdf = corpus_path("bad/encrypted-user-password.pdf")
    res = pagewise("retrieve", str(pdf), "-q", "parties", "--password-stdin", "--json",
                   home=tmp_path / "a", stdin="corpus-user-2024\n")
    assert res.returncode == 0 and "Confidential" in res.stdout, res.stderr
    res = pagewise("retrieve", str(pdf), "-q", "parties", "--json", home=tmp_path / "b",
                   env={"PAGEWISE_PDF_PASSWORD": "corpus-user-2024"})
    assert res.returncode == 0 and "Confidential" in res.stdout, res.stderr
    res = pagewise("retrieve", str(pdf), "-q", "parties", home=tmp_path / "c", stdin="wrong\n")
    assert res.returncode == 1                        # no password given: asked for, one line
    res = pagewise("index", "--help", home=tmp_path / "d")
    assert "--password-stdin" in res.stdout and "ps" in res.stdout
    res = pagewise("index", str(pdf), "--password", "x", "--password-stdin", home=tmp_path / "e")
    assert res.returncode == 2 and "not allowed with" in res.stderr


def test_the_ocr_copy_is_0600_in_a_0700_folder(pagewise_home, tmp_path, umask_022):
    """The searchable copy holds the document's text (issue 32, point 8)."""
    import pymupdf

    from app.core import paths
    from app.core.documents import ocr
    from tests.support.strict import unavailable
    if not ocr.available():
        unavailable("Tesseract is not installed (scripts/setup.sh)")
    (paths.data_dir() / "ocr").mkdir(mode=0o755)              # left by an earlier version
    with pymupdf.open(corpus_path() / "bad" / "scanned-image-only-en.pdf") as doc:
        copy, _ = ocr.make_searchable(doc, [1], "ab" * 32)
    assert loose(copy.parent) == [] and mode(copy.parent) == 0o700
