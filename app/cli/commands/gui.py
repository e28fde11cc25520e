"""`pagewise` / `pagewise gui [FILE…]`: the desktop app (app.qt, imported only here and only
when the command runs: the other commands never load Qt)."""
from __future__ import annotations

from app.errors import UserError


def run(args):
    from app.qt.app import run_gui
    code = run_gui(args.files, screenshot=args.screenshot, question=args.question, compare=args.compare)
    if code:
        raise UserError(f"the desktop app exited with status {code}")
    return None, ""
