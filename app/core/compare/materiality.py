"""Which changes a lawyer reads first: a number, an amount or a duration changed, a party
swapped, an obligation turned ("may" → "must"), a cap or a limit touched, a clause added or
removed. Judged on the words deleted and inserted alone, so it needs no model."""
from __future__ import annotations

import re

_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|"
                     r"thirty|forty|fifty|sixty|ninety|hundred|thousand|million|percent)\b", re.I)
_DURATION = re.compile(r"\b(?:day|week|month|year|hour|business day|calendar)s?\b", re.I)
_OBLIGATION = re.compile(r"^(?:may|must|shall|will|should|can|cannot|not|no|never|only|might|"
                         r"required|entitled|sole|solely|exclusive)$", re.I)
_PARTY = re.compile(r"^(?:customer|provider|party|parties|licensor|licensee|vendor|supplier|buyer|seller|"
                    r"discloser|recipient|affiliates?|subcontractors?|contractor|client)(?:['’]s)?$", re.I)
_CAP = re.compile(r"\b(?:cap|caps|capped|uncapped|liabilit\w*|limit\w*|maximum|exceed\w*|indemn\w*|"
                  r"damages|waiver|warrant\w*)\b", re.I)
_ZH_OBLIGATION = re.compile(r"应当|必须|可以|不得|应|须")

KINDS = ("number", "duration", "obligation", "party", "cap")


def kinds_of(deleted: list[str], inserted: list[str]) -> list[str]:
    """The material kinds of one change, from its deleted and inserted words (either side)."""
    words = [w.strip(".,;:()“”\"'") for w in deleted + inserted]
    text = " ".join(words)
    found = []
    if _NUMBER.search(text):
        found.append("number")
    if _DURATION.search(text):
        found.append("duration")
    if any(_OBLIGATION.match(w) for w in words) or _ZH_OBLIGATION.search(text):
        found.append("obligation")
    if any(_PARTY.match(w) for w in words):
        found.append("party")
    if _CAP.search(text):
        found.append("cap")
    return found
