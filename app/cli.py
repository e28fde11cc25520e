"""Headless commands (ARCHITECTURE §7). Every command takes --json; errors are one line, exit 1."""
from __future__ import annotations

import argparse
import json
import logging
import sys
import traceback
from pathlib import Path

from app.core import paths
from app.core.failures import kind_of

log = logging.getLogger("pagewise")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pagewise", description="Ask PDFs questions, offline, with page citations.")
    sub = p.add_subparsers(dest="command")

    gui = sub.add_parser("gui", help="the desktop app (default)")
    gui.add_argument("files", nargs="*")
    gui.add_argument("--screenshot", help="render the window offscreen to this PNG and exit")
    gui.add_argument("-q", "--question", help="with --screenshot: ask this first")
    gui.add_argument("--compare", action="store_true", help="open two documents side by side")

    ask = sub.add_parser("ask", help="answer a question about PDF files, with verified citations")
    ask.add_argument("files", nargs="+")
    ask.add_argument("-q", "--question", required=True)
    ask.add_argument("--password", help="password of an encrypted PDF")
    ask.add_argument("--model", help="model id from models.toml (default: the plan's choice)")
    ask.add_argument("--mode", choices=["auto", "whole", "retrieval"], default="auto")
    ask.add_argument("--json", action="store_true")

    ret = sub.add_parser("retrieve", help="the best pages for a question (no model needed)")
    ret.add_argument("files", nargs="+")
    ret.add_argument("-q", "--question", required=True)
    ret.add_argument("-k", type=int, default=5)
    ret.add_argument("--password")
    ret.add_argument("--json", action="store_true")

    idx = sub.add_parser("index", help="ingest PDF files into the library")
    idx.add_argument("files", nargs="+")
    idx.add_argument("--password")
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
    mi = msub.add_parser("import")
    mi.add_argument("path")
    mi.add_argument("--json", action="store_true")
    return p


def _setup_logging() -> Path:
    log_file = paths.log_dir() / "pagewise.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return log_file


def _emit(args, data: dict, human: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(human)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    log_file = _setup_logging()
    command = args.command or "gui"
    try:
        from app import commands
        handler = getattr(commands, f"cmd_{command}")
        data, human = handler(args)
        if data is not None:
            _emit(args, data, human)
        return 0
    except BrokenPipeError:          # `pagewise … | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("pagewise: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line for the user, the traceback goes to the log
        log.error("command %s failed: %s\n%s", command, exc, traceback.format_exc())
        message = _one_line(exc)
        if getattr(args, "json", False):
            print(json.dumps({"error": message, "kind": kind_of(exc).value, "type": type(exc).__name__},
                             ensure_ascii=False))
        print(f"pagewise: error: {message}", file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    from app import errors
    return errors.describe(exc)
