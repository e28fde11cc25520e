"""`pagewise library list|remove ID [--json]` through the real command line."""
from __future__ import annotations

import json
import subprocess
import sys

from app.core.documents import ocr
from app.core.library import Library
from app.core.paths import library_path
from tests.support import ROOT


def pagewise(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


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
