"""`pagewise ask FILE… -q QUESTION [-q FOLLOW-UP …]`: one conversation, one engine start;
for each question the evidence first (the search's best sentences, quoted and checked, printed
before the engine starts), then the model's answer with its citations, each checked against
its page."""
from __future__ import annotations

import sys
import time

from app.cli.documents import add_all, doc_refs, open_library
from app.cli.evidence_output import AnswerPrinter
from app.cli.progress import ReadingLine, status_printer
from app.cli.search_vectors import VectorsWhileStarting
from app.service import Assistant, LibraryChanged


class AnswersThenFailure(Exception):
    """A later question failed after earlier ones were answered: --json prints those answers
    beside the error (dispatch unwraps `cause`)."""

    def __init__(self, answers: list[dict], cause: Exception):
        super().__init__(str(cause))
        self.answers, self.cause = answers, cause


def say_library_changed(change: LibraryChanged) -> None:
    for label in change.removed:
        print(f"pagewise: {label} was removed from the library; asking the rest", file=sys.stderr, flush=True)
    if change.back:
        print(f"pagewise: {', '.join(change.back)} added to the library again; asking it too",
              file=sys.stderr, flush=True)


def run(args):
    """One or more questions (`-q` again and again) in one conversation and one engine start."""
    stream = getattr(args, "stream", False)
    if stream:
        args.json = True       # a failure is a JSON line too
    quiet = args.json
    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=quiet)
    refs = doc_refs(infos, args.files)
    out = AnswerPrinter(args.json, stream)
    questions = args.question if isinstance(args.question, list) else [args.question]
    assistant = Assistant(lib, model_id=args.model, threads=getattr(args, "threads", None))
    if not quiet:
        assistant.subscribe(status_printer())
    # the first question's evidence before anything else: the engine's start takes seconds
    first = assistant.evidence(refs, questions[0], started=time.perf_counter())
    out.evidence(questions[0], first, 1, len(questions))
    vectors = VectorsWhileStarting(lib, [i.id for i in infos], quiet=quiet)
    answers = []
    try:
        assistant.start()
        vectors.finish()
        mode = {"whole": "whole-document"}.get(args.mode, args.mode)
        for answer in assistant.ask_series(list(zip(infos, refs)), questions, mode=mode, first_evidence=first,
                                           on_evidence=out.evidence, new_line=lambda: ReadingLine(quiet=quiet),
                                           on_delta=out.delta if stream else None, tell=say_library_changed):
            answers.append(answer)
            out.answer(answer)
    except Exception as exc:
        if answers and args.json and not stream:
            raise AnswersThenFailure([a.to_dict() for a in answers], exc) from exc
        raise
    finally:
        assistant.stop()
    if stream:
        return None, None
    if len(answers) == 1:
        return answers[0].to_dict(), None
    return {"answers": [a.to_dict() for a in answers]}, None
