"""`pagewise` / `pagewise gui [FILE…]`: the desktop app (app.qt, imported only here and only
when the command runs: the other commands never load Qt)."""
from __future__ import annotations

from app.failure_messages import UserError


def run(args):
    if getattr(args, "diff", False):
        return _versions(args)
    from app.qt.app import run_gui
    code = run_gui(args.files, screenshot=args.screenshot, question=args.question, compare=args.compare)
    if code:
        raise UserError(f"the desktop app exited with status {code}")
    return None, ""


def _versions(args):
    """`pagewise gui --diff OLD.pdf NEW.pdf`: the Compare versions window."""
    if len(args.files) != 2:
        raise UserError(f"--diff takes two PDF files (the old version, then the new), not {len(args.files)}")
    from app.qt.app import run_versions
    code = run_versions(args.files[0], args.files[1], screenshot=args.screenshot, change=args.change)
    if code:
        raise UserError(f"the Compare versions window exited with status {code}")
    return None, ""
