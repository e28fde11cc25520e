"""Bytes that are not UTF-8 where the shell hands them over, through a real `pagewise` process:
each case is one line (or none), never a traceback.

Before: a Latin-1 file name gave a 40-line "--- Logging error ---" traceback; a password with
non-UTF-8 bytes gave "TypeError: in method 'fz_authenticate_password'"; `compare --topics`
took non-UTF-8 bytes and went on with them.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.support.cli import ROOT
from tests.support.corpus import corpus_path

pytestmark = pytest.mark.skipif(os.name != "posix", reason="bytes in argv")


def run(home, *args: bytes | str, timeout: float = 300) -> subprocess.CompletedProcess:
    argv = [os.fsencode(a) if isinstance(a, str) else a for a in args]
    env = {**os.environ, "PAGEWISE_HOME": str(home), "PYTHONPATH": str(ROOT), "LC_ALL": "C.UTF-8"}
    return subprocess.run([os.fsencode(os.sys.executable), b"-m", b"app", *argv], cwd=ROOT, env=env,
                          capture_output=True, timeout=timeout)


def lines(proc) -> list[str]:
    text = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in text and "Logging error" not in text, text
    return [line for line in text.splitlines() if line.strip()]


def test_a_latin1_file_name_is_indexed_without_a_logging_traceback(tmp_path):
    latin1 = os.path.join(os.fsencode(tmp_path), b"contrat-r\xe9sum\xe9.pdf")
    shutil.copy(corpus_path("licenses/apache-2.0.pdf"), latin1)
    proc = run(tmp_path / "home", b"index", latin1, b"--no-dense")
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == []
    listed = run(tmp_path / "home", b"library", b"list", b"--json")
    assert listed.returncode == 0 and lines(listed) == []
    assert "contrat-r\\xe9sum\\xe9.pdf" in json.loads(listed.stdout)["documents"][0]["path"]


def test_a_password_with_non_utf8_bytes_is_a_wrong_password(tmp_path):
    proc = run(tmp_path / "home", b"index", os.fsencode(corpus_path("bad/encrypted-user-password.pdf")),
               b"--password", b"corpus-\xff\xfe", b"--no-dense")
    assert proc.returncode == 1
    (line,) = lines(proc)
    assert "wrong password" in line


def test_compare_topics_with_non_utf8_bytes_is_one_line(tmp_path):
    nda = os.fsencode(corpus_path("contracts-en/common-paper-mnda.pdf"))
    apache = os.fsencode(corpus_path("licenses/apache-2.0.pdf"))
    proc = run(tmp_path / "home", b"compare", nda, apache, b"--topics", b"termination", b"r\xe9siliation")
    assert proc.returncode == 1
    (line,) = lines(proc)
    assert "--topics has bytes that are not UTF-8" in line


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs (root only): the disk fills during an index."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a small tmpfs")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


def test_a_full_disk_is_a_line_or_two_and_the_library_still_opens(small_disk):
    home = small_disk / "home"
    pdfs = [p for folder in ("contracts-en", "licenses", "papers", "contracts-zh")
            for p in sorted(corpus_path().glob(f"{folder}/*.pdf"))]
    proc = run(home, b"index", *[os.fsencode(p) for p in pdfs], b"--no-dense")
    assert proc.returncode == 1
    said = lines(proc)
    assert len(said) <= 2 and said[-1].startswith("pagewise: error: cannot write the library") and \
        said[-1].endswith("the disk is full"), said
    listed = run(home, b"library", b"list")
    assert listed.returncode == 0 and lines(listed) == []     # what was added before stays readable


@pytest.mark.slow
def test_ask_about_a_latin1_file_name_answers_and_keeps_the_exchange(tmp_path):
    # before: the answer printed, then "UnicodeEncodeError: … surrogates not allowed" (rc 1) when
    # the exchange naming the file was stored, and the conversation lost it
    latin1 = os.path.join(os.fsencode(tmp_path), b"contrat-r\xe9sum\xe9.pdf")
    shutil.copy(corpus_path("contracts-en/common-paper-mnda.pdf"), latin1)
    home = tmp_path / "home"
    proc = run(home, b"ask", latin1, b"-q", b"Who are the parties?", b"--json")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    answer = json.loads(proc.stdout)
    assert all(card["doc"].endswith("contrat-r\\xe9sum\\xe9.pdf") for card in answer["evidence"]["cards"])
    assert "Traceback" not in proc.stderr.decode("utf-8", "replace")
    import sqlite3
    con = sqlite3.connect(home / "data" / "library.sqlite")
    try:
        assert con.execute("SELECT count(*) FROM exchanges").fetchone()[0] == 1
    finally:
        con.close()
