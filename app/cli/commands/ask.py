"""`pagewise ask FILE… -q QUESTION [-q FOLLOW-UP …]`: one conversation, one engine start;
the answer with its citations, each checked against its page."""
from __future__ import annotations

from app.cli.documents import add_all, doc_refs, open_library
from app.cli.output import compact_json
from app.cli.progress import ReadingLine, status_printer
from app.cli.search_vectors import VectorsWhileStarting


def run(args):
    """One or more questions (`-q` again and again) in one conversation and one engine start."""
    from app.core.answer.conversation import Conversation
    from app.worker.runtime import EngineRuntime

    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=args.json)
    refs = doc_refs(infos, args.files)
    runtime = EngineRuntime(model_id=args.model, on_status=None if args.json else status_printer(),
                            threads=getattr(args, "threads", None))
    vectors = VectorsWhileStarting(lib, [i.id for i in infos], quiet=args.json)
    questions = args.question if isinstance(args.question, list) else [args.question]
    answers = []
    try:
        runtime.start()
        vectors.finish()
        mode = {"whole": "whole-document"}.get(args.mode, args.mode)
        conv = Conversation()
        for question in questions:
            line = ReadingLine(quiet=args.json)
            answer = runtime.ask(lib, refs, question, mode=mode, conversation=conv,
                                 on_reading=line.reading, on_progress=line.progress)
            line.done()
            answers.append(answer)
            lib.add_exchange([i.id for i in infos], question, compact_json(answer.to_dict()))
    finally:
        runtime.stop()
    if len(answers) == 1:
        return answers[0].to_dict(), format_answer(answers[0])
    human = "\n\n".join(f"Q{n}: {q}\n{format_answer(a)}" for n, (q, a) in enumerate(zip(questions, answers), 1))
    return {"answers": [a.to_dict() for a in answers]}, human


def format_answer(answer) -> str:
    from app.core.answer.badge import Badge
    lines = [answer.text or "(no answer)", ""]
    for n, c in enumerate(answer.citations, start=1):
        badge = Badge.of(c).text()
        note = f" ({c.note})" if c.note else ""
        lines.append(f"[{n}] {c.doc} p. {c.page} [{badge}]{note}: \u201c{c.quote}\u201d")
    if not answer.citations:
        lines.append("(no citations)")
    for w in getattr(answer, "warnings", ()):
        lines.append(f"note: {w}")
    t, engine = answer.timing, answer.engine
    lines.append(f"\n{answer.mode}; {engine.summary if engine else ''}; "
                 f"first token {t.ttft_s or 0:.2f} s, total {t.total_s:.2f} s")
    return "\n".join(lines)
