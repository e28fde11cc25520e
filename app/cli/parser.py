"""The command line's arguments (the contract in ARCHITECTURE §7): every command takes --json."""
from __future__ import annotations

import argparse
import os
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pagewise", description="Ask PDFs questions, offline, with page citations.")
    sub = p.add_subparsers(dest="command")

    gui = sub.add_parser("gui", help="the desktop app (default)")
    gui.add_argument("files", nargs="*")
    gui.add_argument("--screenshot", help="render the window offscreen to this PNG and exit")
    gui.add_argument("-q", "--question", help="with --screenshot: ask this first")
    gui.add_argument("--compare", action="store_true", help="open two documents side by side")
    gui.add_argument("--diff", action="store_true", help="compare two versions of a document (old, then new)")
    gui.add_argument("--change", type=int, default=0, help="with --diff --screenshot: show this change (0 = first)")

    ask = sub.add_parser("ask", help="answer a question about PDF files, with verified citations")
    ask.add_argument("files", nargs="+")
    ask.add_argument("-q", "--question", required=True, action="append",
                     help="a question; give -q again for follow-ups in the same conversation")
    _add_password(ask)
    ask.add_argument("--model", help="model id from models.toml (default: the plan's choice)")
    ask.add_argument("--mode", choices=["auto", "whole", "retrieval"], default="auto")
    ask.add_argument("--threads", type=int, help="CPU threads for llama.cpp (default: the setting, else all cores)")
    ask.add_argument("--json", action="store_true")
    ask.add_argument("--stream", action="store_true",
                     help="JSON lines as things happen: the evidence first, then the reply's pieces, then the answer")

    rd = sub.add_parser("read", help="read documents whole ahead of the questions (kept for later answers)")
    rd.add_argument("files", nargs="+")
    _add_password(rd)
    rd.add_argument("--model", help="model id from models.toml (default: the plan's choice)")
    rd.add_argument("--threads", type=int)
    rd.add_argument("--json", action="store_true")

    ret = sub.add_parser("retrieve", help="the best pages for a question (no model needed)")
    ret.add_argument("files", nargs="+")
    ret.add_argument("-q", "--question", required=True)
    ret.add_argument("-k", type=int, default=5)
    _add_password(ret)
    ret.add_argument("--json", action="store_true")

    cmp = sub.add_parser("compare", help="documents' clauses side by side, from the search alone")
    cmp.add_argument("files", nargs="+", metavar="FILE", help="two PDF files or more")
    cmp.add_argument("--topics", nargs="+", help="topics (default: termination, liability, payment, "
                     "confidentiality, governing law)")
    cmp.add_argument("--summary", action="store_true", help="also ask the model for a summary row")
    cmp.add_argument("--model", help="with --summary: model id from models.toml")
    cmp.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    _add_password(cmp)
    out = cmp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true", help="print the table as CSV (one column per document)")

    dif = sub.add_parser("diff", help="what changed between two versions of a document, clause by clause")
    dif.add_argument("files", nargs="+", metavar="FILE", help="the old version, then the new (PDF files)")
    dif.add_argument("--markdown", metavar="FILE", help="also write the change list as Markdown")
    dif.add_argument("--pdf", metavar="FILE", help="also write the change list as a PDF memo")
    _add_password(dif)
    dif.add_argument("--json", action="store_true")

    idx = sub.add_parser("index", help="ingest PDF files into the library")
    idx.add_argument("files", nargs="+")
    _add_password(idx)
    idx.add_argument("--no-dense", dest="dense", action="store_false",
                     help="skip the search vectors (multilingual-e5-small; ~0.3 s a page on a CPU)")
    idx.add_argument("--json", action="store_true")

    doc = sub.add_parser("doctor", help="hardware, engines available, the plan this machine gets")
    doc.add_argument("--json", action="store_true")

    pl = sub.add_parser("plan", help="the plan for hardware you describe")
    pl.add_argument("--gpu-name", default="")
    pl.add_argument("--vram-gib", type=float)
    pl.add_argument("--free-vram-gib", type=float)
    pl.add_argument("--gpus", type=int, default=1, help="number of identical GPUs")
    pl.add_argument("--compute-capability", default="8.9")
    pl.add_argument("--cpu-only", action="store_true")
    pl.add_argument("--ram-gib", type=float, default=16)
    pl.add_argument("--need-tokens", type=int)
    pl.add_argument("--model")
    pl.add_argument("--json", action="store_true")

    mod = sub.add_parser("models", help="the model catalogue")
    msub = mod.add_subparsers(dest="models_command", required=True)
    ml = msub.add_parser("list")
    ml.add_argument("--json", action="store_true")
    mp = msub.add_parser("pull")
    mp.add_argument("id")
    mp.add_argument("--endpoint", help="hub address (default: huggingface.co, or HF_ENDPOINT)")
    mp.add_argument("--json", action="store_true")
    mv = msub.add_parser("verify")
    mv.add_argument("id")
    mv.add_argument("--json", action="store_true")
    mi = msub.add_parser("import", help="a local GGUF file or AWQ folder, checked, then listed and usable")
    mi.add_argument("path")
    mi.add_argument("--id", help="the model's id (default: from the file name)")
    mi.add_argument("--json", action="store_true")
    mr = msub.add_parser("remove", help="delete a downloaded or imported model")
    mr.add_argument("id")
    mr.add_argument("--json", action="store_true")

    st = sub.add_parser("settings", help="read and change settings; secrets go to the OS keyring")
    ssub = st.add_subparsers(dest="settings_command", required=True)
    sg = ssub.add_parser("get", help="one setting, or all of them")
    sg.add_argument("key", nargs="?")
    sg.add_argument("--json", action="store_true")
    ss = ssub.add_parser("set")
    ss.add_argument("key")
    ss.add_argument("value")
    ss.add_argument("--json", action="store_true")
    sx = ssub.add_parser("set-secret", help="a secret read from stdin, kept in the OS keyring only")
    sx.add_argument("name")
    sx.add_argument("--json", action="store_true")

    rev = sub.add_parser("review", help="a whole-document task; map-reduce over page groups when "
                         "the documents do not fit (app/cli/commands/review.py)")
    rev.add_argument("files", nargs="+")
    rev.add_argument("--template", choices=["contract", "deadlines", "risks", "summary"], required=True)
    _add_password(rev)
    rev.add_argument("--model")
    rev.add_argument("--group-pages", type=int, default=5, help="pages per part (default 5)")
    rev.add_argument("--parts", action="store_true", help="read by parts even when everything fits")
    rev.add_argument("--json", action="store_true")

    lib = sub.add_parser("library", help="the documents in the library (app/cli/commands/library.py)")
    lsub = lib.add_subparsers(dest="library_command", required=True)
    ll = lsub.add_parser("list")
    ll.add_argument("--json", action="store_true")
    lr = lsub.add_parser("remove", help="forget a document, its history and cached state")
    lr.add_argument("id", type=int)
    lr.add_argument("--json", action="store_true")
    return p


PASSWORD_ENV = "PAGEWISE_PDF_PASSWORD"


def _add_password(parser: argparse.ArgumentParser) -> None:
    """--password (shows in `ps` to every user of the machine), or --password-stdin, or the
    PAGEWISE_PDF_PASSWORD environment variable (readable by this user's processes only)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--password", help="password of an encrypted PDF; visible to other users in `ps`: "
                                          f"prefer --password-stdin or ${PASSWORD_ENV}")
    group.add_argument("--password-stdin", action="store_true",
                       help="read the PDF's password from the first line of standard input")


def read_password(args) -> None:
    if not hasattr(args, "password"):
        return
    if args.password_stdin:
        args.password = sys.stdin.readline().rstrip("\r\n")
    elif args.password is None and os.environ.get(PASSWORD_ENV):
        args.password = os.environ[PASSWORD_ENV]
