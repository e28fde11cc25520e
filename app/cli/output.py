"""A command's result on stdout: JSON with --json, else the text for people."""
from __future__ import annotations

import json


def emit(args, data: dict, human: str | None) -> None:
    """`human` None: the command printed its text as it went (`ask`: evidence first)."""
    if getattr(args, "json", False):
        print(json.dumps(data, ensure_ascii=False, indent=2))
    elif human is not None:
        print(human)


def compact_json(data) -> str:
    """One line of JSON, as the library keeps an exchange's answer."""
    return json.dumps(data, ensure_ascii=False)
