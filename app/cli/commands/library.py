"""`pagewise library list|remove ID`: what the library holds, and forgetting a document
(its pages, chunks, search vectors, chat history and OCR copy): app/core/documents/listing.py."""
from __future__ import annotations

import sys

from app.failure_messages import UserError


def run(args):
    from app.core.documents import listing
    from app.core.library import Library
    lib = Library()
    try:
        if args.library_command == "list":
            rows = listing.document_rows(lib)
            human = "\n".join(f"{r['id']:>4}  {r['pages']:>4} pp.  {r['lang']:<5} {r['added']}  {r['title'][:60]}"
                              for r in rows) or "the library is empty"
            return {"documents": rows}, human
        if args.library_command == "remove":
            try:
                gone = listing.remove_document(lib, args.id, on_wait=lambda: print(
                    f"pagewise: an answer is reading document {args.id}; it is removed when that "
                    "answer is done…", file=sys.stderr, flush=True))
            except listing.DocumentError:
                raise UserError(f"document {args.id} is not in the library "
                                "(see `pagewise library list`)") from None
            return {"removed": gone}, (f"removed {gone['id']}: {gone['title']} "
                                       f"({gone['exchanges_removed']} questions and answers forgotten)")
        raise UserError(f"unknown library command {args.library_command}")
    finally:
        lib.close()
