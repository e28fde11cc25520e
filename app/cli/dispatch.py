"""`pagewise …`: parse the arguments, run the command, print its result; a failure is one line
on stderr (and a JSON error with --json), exit 1, the traceback in the log."""
from __future__ import annotations

import json
import logging
import sys
import traceback

from app.cli.commands import COMMANDS
from app.cli.commands.ask import AnswersThenFailure
from app.cli.logfile import setup_logging
from app.cli.output import emit
from app.cli.parser import build_parser, read_password
from app.core.failures import kind_of
from app.failure_messages import describe

log = logging.getLogger("pagewise")


def _check_questions(args) -> None:
    from app.core.answer import question_check
    asked = getattr(args, "question", None)
    for question in asked if isinstance(asked, list) else [asked] if asked else []:
        question_check.check(question)


# Text arguments that travel on as text (search terms, setting values, ids): bytes that are not
# UTF-8 (kept by Python as lone surrogates) are refused here, not met later as an encoding error.
# File paths may hold any bytes and are not checked; questions have their own check.
_TEXT_ARGS = ("topics", "value", "key", "id", "model", "endpoint", "name", "template")


def _check_text(args) -> None:
    from app.core.failures import BadInput
    for name in _TEXT_ARGS:
        given = getattr(args, name, None)
        for text in given if isinstance(given, list) else [given]:
            if not isinstance(text, str):
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise BadInput(f"--{name.replace('_', '-')} has bytes that are not UTF-8 text "
                               f"(at character {exc.start + 1}); type it again in UTF-8") from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    read_password(args)
    setup_logging()
    command = args.command or "gui"
    try:
        _check_questions(args)       # before an engine starts: a bad question fails in an instant
        _check_text(args)
        data, human = COMMANDS[command](args)
        if data is not None:
            emit(args, data, human)
        return 0
    except BrokenPipeError:          # `pagewise … | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("pagewise: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line for the user, the traceback goes to the log
        log.error("command %s failed: %s\n%s", command, exc, traceback.format_exc())
        done = {}
        if isinstance(exc, AnswersThenFailure):     # the answers finished before it are printed too
            done, exc = {"answers": exc.answers}, exc.cause
        message = describe(exc)
        if getattr(args, "json", False):
            print(json.dumps({**done, "error": message, "kind": kind_of(exc).value, "type": type(exc).__name__},
                             ensure_ascii=False))
        print(f"pagewise: error: {message}", file=sys.stderr)
        return 1
