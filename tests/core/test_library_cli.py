"""`pagewise library list|remove ID [--json]` through the real command line (app.cli.main)."""
from __future__ import annotations

import json
import subprocess

from app.core.documents import ocr
from app.core.library import Library
from app.core.paths import library_path
from tests.support.cli import run_cli


def pagewise(*argv: str) -> subprocess.CompletedProcess:
    return run_cli(*argv)


def test_list_then_remove_forgets_history_and_cached_state(corpus):
    lib = Library(library_path())
    mpl = lib.add(corpus / "licenses" / "mpl-2.0.pdf")
    gpl = lib.add(corpus / "licenses" / "gpl-3.0.pdf")
    lib.add_exchange([mpl.id], "What is a Contributor?", "{}")
    lib.add_exchange([mpl.id, gpl.id], "Compare them", "{}")
    copy = ocr.copy_path(mpl.sha256)
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(b"%PDF-1.7 stand-in for an OCR copy")
    lib.close()

    listed = json.loads(pagewise("library", "list", "--json").stdout)["documents"]
    assert [(d["id"], d["pages"], d["lang"]) for d in listed] == [(mpl.id, 6, "en"), (gpl.id, 11, "en")]
    assert listed[0]["title"] == "Mozilla Public License, Version 2.0" and listed[0]["added"]

    run = pagewise("library", "remove", str(mpl.id), "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["removed"] == {"id": mpl.id, "title": mpl.title,
                                                 "exchanges_removed": 2, "ocr_copy_removed": True}
    assert not copy.exists()
    lib = Library(library_path())
    try:
        assert [d.id for d in lib.documents()] == [gpl.id]
        assert lib.exchanges([gpl.id]) == [] and lib.exchanges([mpl.id, gpl.id]) == []
    finally:
        lib.close()
    human = pagewise("library", "list").stdout
    assert "GNU GENERAL PUBLIC LICENSE" in human.upper() and "Mozilla" not in human


def test_removing_an_unknown_id_is_one_line(corpus):
    run = pagewise("library", "remove", "42")
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "pagewise: error: document 42 is not in the library (see `pagewise library list`)"]


def test_a_home_named_with_hash_question_mark_and_percent(corpus, tmp_path):
    """Issue 32, point 14: `library list` failed and SQLite made stray files outside the app's
    folder (the read-only `file:` URI was not quoted)."""
    home = tmp_path / "odd #1 ?x=%41 %"
    run = run_cli("index", str(corpus / "licenses" / "mpl-2.0.pdf"), "--no-dense", env={"PAGEWISE_HOME": str(home)})
    assert run.returncode == 0, run.stderr
    before = sorted(p.name for p in tmp_path.iterdir())
    listed = run_cli("library", "list", "--json", env={"PAGEWISE_HOME": str(home)})
    assert listed.returncode == 0, listed.stderr
    assert [d["pages"] for d in json.loads(listed.stdout)["documents"]] == [6]
    assert sorted(p.name for p in tmp_path.iterdir()) == before == [home.name]
