"""`pagewise read FILE…`: the documents read whole into the engine's KV cache ahead of the
questions (what the window does in the background)."""
from __future__ import annotations

from pathlib import Path

from app.cli.documents import add_all, doc_refs, open_library
from app.cli.progress import ReadingLine, status_printer
from app.service import Assistant


def run(args):
    """Read whole documents ahead of the questions (their KV state is kept): later questions
    about them are answered whole-document at once."""
    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=args.json)
    refs = doc_refs(infos, args.files)
    assistant = Assistant(lib, model_id=args.model, threads=getattr(args, "threads", None))
    if not args.json:
        assistant.subscribe(status_printer())
    line = ReadingLine(quiet=args.json, what="reading the document")
    try:
        assistant.start()
        result = assistant.read(refs, on_progress=line.progress)
    finally:
        line.done()
        assistant.stop()
    names = ", ".join(Path(f).name for f in args.files)
    human = (f"{names}: already read ({result['tokens']:,} tokens); questions use the whole document"
             if result.get("already") else
             f"{names}: read {result['tokens']:,} tokens in {result['seconds']:.1f} s; "
             "questions about it are now answered from the whole document")
    return result, human
