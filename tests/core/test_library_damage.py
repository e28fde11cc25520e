"""A damaged library is never lost in silence (issue 32, point 4): a -wal whose frames stop
checking out after a kill -9, and a garbled page of library.sqlite. The user is told what was
kept and where the damaged copy went; errors carry advice, not "internal"."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.support.cli import ROOT, run_process
from tests.support.corpus import corpus_path

APACHE = corpus_path() / "licenses" / "apache-2.0.pdf"
NDA = corpus_path() / "contracts-en" / "common-paper-mnda.pdf"

# A process that adds A, checkpoints (A now in the main file), adds B (only in the -wal), and
# is killed with SIGKILL before closing: the WAL stays behind, as after a crash.
_CRASH = """
import os, signal, sys
from app.core import paths
from app.core.library import Library
lib = Library()
lib.add(sys.argv[1])
lib._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
lib.add(sys.argv[2])
os.kill(os.getpid(), signal.SIGKILL)
"""


def _crashed_library(home: Path) -> Path:
    env = {**os.environ, "PAGEWISE_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", _CRASH, str(APACHE), str(NDA)], env=env, cwd=ROOT)
    assert proc.returncode == -signal.SIGKILL
    db = home / "data" / "library.sqlite"
    assert (db.parent / "library.sqlite-wal").stat().st_size > 100_000
    return db


def test_a_damaged_wal_is_reported_with_what_was_kept_and_the_copy(tmp_path):
    home = tmp_path / "home"
    db = _crashed_library(home)
    wal = db.parent / "library.sqlite-wal"
    raw = bytearray(wal.read_bytes())
    page_size = int.from_bytes(raw[8:12], "big")
    raw[32 + 3 * (24 + page_size) + 100] ^= 0xFF        # one flipped bit in B's 4th frame
    wal.write_bytes(bytes(raw))
    damaged_wal = bytes(raw)

    listed = run_process("library", "list", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["documents"]) == 1                       # SQLite kept A only
    assert "write-ahead log" in listed.stderr and "damaged" in listed.stderr, listed.stderr
    assert "Kept: the library as it was before them (1 documents)" in listed.stderr
    copies = list((home / "data" / "damaged").glob("*/library.sqlite-wal"))
    assert len(copies) == 1 and str(copies[0].parent) in listed.stderr
    assert copies[0].read_bytes() == damaged_wal                     # the lost writes are still in it
    again = run_process("library", "list", "--json", home=home)
    assert "damaged" not in again.stderr                              # told once, not every time


def test_an_intact_wal_after_a_crash_says_nothing(tmp_path):
    home = tmp_path / "home"
    _crashed_library(home)
    listed = run_process("library", "list", "--json", home=home)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)["documents"]) == 2
    assert "warning" not in listed.stderr and not (home / "data" / "damaged").exists()


def test_a_garbled_page_stops_writes_with_advice_and_a_copy(tmp_path):
    home = tmp_path / "home"
    added = run_process("index", str(APACHE), str(NDA), "--no-dense", home=home)
    assert added.returncode == 0, added.stderr
    db = home / "data" / "library.sqlite"
    con = sqlite3.connect(db)
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.close()
    with open(db, "r+b") as fh:                 # a page in the middle: a bad sector, a stray write
        fh.seek(page_size * (pages // 2))
        fh.write(os.urandom(page_size))
    mpl = corpus_path() / "licenses" / "mpl-2.0.pdf"
    run = run_process("index", str(mpl), "--no-dense", "--json", home=home)
    assert run.returncode == 1
    error = json.loads(run.stdout)
    assert error["kind"] != "internal" and "damaged" in error["error"], error
    copies = list((home / "data" / "damaged").glob("*/library.sqlite"))
    assert len(copies) == 1 and str(copies[0].parent) in error["error"]
    assert "add your documents again" in error["error"]


def _frames(wal: Path) -> tuple[int, int]:
    raw = wal.read_bytes()
    frame = 24 + int.from_bytes(raw[8:12], "big")
    return frame, (len(raw) - 32) // frame


def _told_and_copied(home: Path, listed) -> None:
    assert listed.returncode == 0, listed.stderr
    assert "write-ahead log" in listed.stderr and "damaged" in listed.stderr, listed.stderr
    assert len(listed.stderr.strip().splitlines()) == 1
    assert len(list((home / "data" / "damaged").glob("*/library.sqlite-wal"))) == 1


def test_a_wal_whose_last_commit_frame_header_is_damaged_is_reported(tmp_path):
    home = tmp_path / "home"
    db = _crashed_library(home)
    wal = db.parent / "library.sqlite-wal"
    frame, count = _frames(wal)
    raw = bytearray(wal.read_bytes())
    at = 32 + (count - 1) * frame
    assert int.from_bytes(raw[at + 4:at + 8], "big") != 0              # it is a commit frame
    raw[at + 12] ^= 0xFF                                                 # its salt-2 garbled
    wal.write_bytes(bytes(raw))
    _told_and_copied(home, run_process("library", "list", "--json", home=home))


def test_a_garbled_search_index_is_found_and_copied_once(tmp_path):
    home = tmp_path / "home"
    added = run_process("index", str(APACHE), str(NDA), "--no-dense", home=home)
    assert added.returncode == 0, added.stderr
    db = home / "data" / "library.sqlite"
    con = sqlite3.connect(db)
    con.execute("UPDATE chunk_fts_data SET block = randomblob(length(block)) "
                "WHERE id = (SELECT max(id) FROM chunk_fts_data WHERE length(block) > 200)")
    con.commit()
    assert con.execute("PRAGMA quick_check").fetchone()[0] == "ok"        # SQLite's own check passes
    con.close()
    for _ in range(2):
        run = run_process("library", "list", "--json", home=home)
        assert run.returncode == 1
        error = json.loads(run.stdout)
        assert error["kind"] != "internal" and "search index" in error["error"], error
        assert len(run.stderr.strip().splitlines()) == 1
    assert len(list((home / "data" / "damaged").glob("*/library.sqlite"))) == 1   # one copy, not two
