"""`python -m app.core.documents.table_child FILE '[page, …]'`: the tables of those pages as JSON.

The table pass runs find_tables in a child process: find_tables switches a process-wide MuPDF
setting (small glyph heights) while it works, and the window's highlights, computed meanwhile
on another thread, came out with the wrong heights. A child also keeps a crash in MuPDF on a
hostile file away from the app, and its work off the app's interpreter lock.
"""
from __future__ import annotations

import json
import sys


def tables_of(path: str, pages: list[int]) -> list[dict]:
    import pymupdf

    from app.core.documents import tables
    out = []
    with pymupdf.open(path) as doc:
        for number in pages:
            try:
                found = tables.find(doc.load_page(number - 1))
            except Exception:  # noqa: BLE001 - table detection is a bonus, never a failure
                continue
            out += [{"page": t.page, "lines": list(t.lines)} for t in found]
    return out


def main(argv: list[str]) -> int:
    path, pages = argv[0], json.loads(argv[1])
    json.dump(tables_of(path, pages), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
