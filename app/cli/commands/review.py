"""`pagewise review FILE… --template contract|deadlines|risks|summary [--json]`: a whole-
document task, by map-reduce over page groups when the documents do not fit the context
(app/core/answer/review.py). Progress ("part 3 of 12") on stderr."""
from __future__ import annotations

import sys

from app.cli.documents import add_all, doc_refs, open_library
from app.cli.progress import status_printer
from app.service import Assistant


def run(args):
    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=args.json)
    refs = doc_refs(infos, args.files)
    assistant = Assistant(lib, model_id=args.model)
    if not args.json:
        assistant.subscribe(status_printer())

    def on_part(k: int, n: int, part) -> None:
        eta = f" ≈ {part.expected_s:.0f} s" if part.expected_s is not None else ""
        print(f"[review] part {k} of {n}: {part.doc.label} {part.pages_label}"
              f" ({part.tokens:,} tokens{eta})", file=sys.stderr, flush=True)
    try:
        assistant.start()
        result, data = assistant.review_stored(infos, refs, args.template, on_part=on_part,
                                               group_pages=args.group_pages, force_parts=args.parts)
    finally:
        assistant.stop()
    return data, format_review(result)


def format_review(result) -> str:
    from app.core.answer.badge import Badge
    lines = [result.text or "(no answer)", ""]
    for n, c in enumerate(result.citations, start=1):
        badge = Badge.of(c).text(with_support=False)     # a review's citations get no support check
        lines.append(f"[{n}] {c.doc} p. {c.page} [{badge}]: \u201c{c.quote}\u201d")
    if not result.citations:
        lines.append("(no citations)")
    if result.parts:
        lines.append(f"\n{len(result.parts)} parts, {result.timing.total_s:.0f} s")
    return "\n".join(lines)
