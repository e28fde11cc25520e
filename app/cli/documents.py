"""Opening the library and adding the command's files to it, warnings on stderr."""
from __future__ import annotations

import sys
from pathlib import Path

from app.cli.progress import ingest_progress


def open_library():
    from app.core.library import Library
    return Library()


def add_all(lib, files: list[str], password: str | None, quiet: bool = False):
    infos = []
    for f in files:
        infos.append(lib.add(f, password=password, progress=ingest_progress(Path(f).name, quiet)))
        print_warnings(f, infos[-1].warnings)
    return infos


def print_warnings(name: str, warnings) -> None:
    """Ingestion warnings (pages that lost text, repairs) on stderr, even with --json:
    damaged text is never silent (issue 15.6)."""
    for w in warnings:
        print(f"{name}: warning: {w}", file=sys.stderr, flush=True)


def doc_refs(infos, files: list[str]):
    """The documents as a question names them: numbered from 1, labelled by the path as given."""
    from app.service import doc_refs as numbered
    return numbered(infos, files)
