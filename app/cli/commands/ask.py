"""`pagewise ask FILE… -q QUESTION [-q FOLLOW-UP …]`: one conversation, one engine start;
for each question the evidence first (the search's best sentences, quoted and checked, printed
before the engine starts), then the model's answer with its citations, each checked against
its page."""
from __future__ import annotations

import sys
import time

from app.cli.documents import add_all, doc_refs, open_library
from app.cli.evidence_output import AnswerPrinter
from app.cli.output import compact_json
from app.cli.progress import ReadingLine, status_printer
from app.cli.search_vectors import VectorsWhileStarting
from app.core.documents import doc_locks
from app.errors import UserError


def follow_library(lib, given, conv, asked_ids):
    """The conversation's documents as the library holds them now. One removed by another
    process is left out (and comes back, under its new id, if it is added again); when the set
    changes the conversation starts afresh, saying so on stderr. None left: a one-line error."""
    infos, refs = [], []
    for info, ref in given:
        now = lib.find_sha(info.sha256)
        if now is None:
            if info.id in asked_ids:
                print(f"pagewise: {ref.label} was removed from the library; asking the rest",
                      file=sys.stderr, flush=True)
            continue
        if now != info.id:
            info = lib.get(now)
        infos.append(info)
        refs.append(type(ref)(len(refs) + 1, info.id, ref.label))
    if not infos:
        raise UserError("every document of this conversation was removed from the library")
    ids = [i.id for i in infos]
    if ids != asked_ids:
        back = [r.label for r in refs if r.doc_id not in asked_ids]
        if back:
            print(f"pagewise: {', '.join(back)} added to the library again; asking it too",
                  file=sys.stderr, flush=True)
        conv = type(conv)()
    return infos, refs, conv


def run(args):
    """One or more questions (`-q` again and again) in one conversation and one engine start."""
    from app.core.answer.conversation import Conversation
    from app.core.answer.evidence import find_evidence
    from app.worker.runtime import EngineRuntime

    stream = getattr(args, "stream", False)
    if stream:
        args.json = True       # a failure is a JSON line too
    quiet = args.json
    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=quiet)
    refs = doc_refs(infos, args.files)
    out = AnswerPrinter(args.json, stream)
    questions = args.question if isinstance(args.question, list) else [args.question]
    # the first question's evidence before anything else: the engine's start takes seconds
    asked = time.perf_counter()
    first = find_evidence(lib, refs, questions[0], started=asked)
    out.evidence(questions[0], first, 1, len(questions))
    runtime = EngineRuntime(model_id=args.model, on_status=None if quiet else status_printer(),
                            threads=getattr(args, "threads", None))
    vectors = VectorsWhileStarting(lib, [i.id for i in infos], quiet=quiet)
    answers = []
    try:
        runtime.start()
        vectors.finish()
        mode = {"whole": "whole-document"}.get(args.mode, args.mode)
        conv = Conversation()
        given = list(zip(infos, refs))
        for n, question in enumerate(questions, 1):
            for attempt in (1, 2):
                if n > 1 or attempt > 1:       # another process may have removed or re-added one
                    infos, refs, conv = follow_library(lib, given, conv, [i.id for i in infos])
                line = ReadingLine(quiet=quiet)
                try:
                    with doc_locks.in_use(lib, [i.id for i in infos]):
                        evidence = first if n == 1 and attempt == 1 else find_evidence(lib, refs, question)
                        if n > 1 or attempt > 1:
                            out.evidence(question, evidence, n, len(questions))
                        answer = runtime.ask(lib, refs, question, mode=mode, conversation=conv,
                                             evidence=evidence, on_reading=line.reading,
                                             on_progress=line.progress, on_writing=line.writing,
                                             on_delta=out.delta if stream else None)
                    break
                except doc_locks.DocumentGone:
                    if attempt == 2:
                        raise
            line.done()
            answers.append(answer)
            out.answer(answer)
            lib.add_exchange([i.id for i in infos], question, compact_json(answer.to_dict()))
    finally:
        runtime.stop()
    if stream:
        return None, None
    if len(answers) == 1:
        return answers[0].to_dict(), None
    return {"answers": [a.to_dict() for a in answers]}, None

