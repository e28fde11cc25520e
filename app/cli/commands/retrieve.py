"""`pagewise retrieve FILE… -q QUESTION [-k 5]`: the best passages for a question (no model)."""
from __future__ import annotations

from app.cli.documents import add_all, open_library


def run(args):
    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=args.json)
    label = {i.id: f for i, f in zip(infos, args.files)}
    hits = lib.search(args.question, doc_ids=[i.id for i in infos], k=args.k)
    data = {"hits": [{"doc": label[h.doc_id], "page": h.page, "score": round(h.score, 4),
                      "text": h.text} for h in hits]}
    human = "\n".join(f"{label[h.doc_id]} p. {h.page}  ({h.score:.2f})  {' '.join(h.text.split())[:160]}"
                      for h in hits) or "no matching passages"
    return data, human
