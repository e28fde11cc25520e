"""`pagewise diff OLD.pdf NEW.pdf [--json] [--markdown FILE] [--pdf FILE]`: what changed between
two versions of a contract, clause by clause (renumbered clauses found), material changes first,
each with the words deleted and inserted and their pages in both versions; from the documents'
text and structure alone (no model, no library)."""
from __future__ import annotations

from pathlib import Path

from app.failure_messages import UserError


def run(args):
    from app.core.compare.redline_export import to_markdown, to_pdf, to_text
    from app.core.compare.versions import diff_files
    if len(args.files) != 2:
        raise UserError(f"diff takes two PDF files (the old version, then the new), not {len(args.files)}")
    # bad input: the one-line errors of `index` (missing, not a PDF, password, no text layer)
    redline = diff_files(args.files[0], args.files[1], (args.password, args.password))
    if args.markdown:
        Path(args.markdown).write_text(to_markdown(redline), encoding="utf-8")
    if args.pdf:
        to_pdf(redline, Path(args.pdf))
    return redline.to_dict(), to_text(redline)

