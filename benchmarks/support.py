"""Does a cited sentence back the answer? The citation check (app/core/answer/support.py) over
every question set, per half, in the question's language and across languages.

    .venv/bin/python benchmarks/support.py [--json PATH] [--bridge-off-too]

For each answerable question with a gold answer, each gold sentence (card-sized: the whole
sentences of its page that hold the gold quote) is checked against
  own      its own gold answer                      → should be "supports"
  yes      the bare first word of a yes/no gold answer ("Yes", "可以")   → should be "supports"
  flip     the opposite bare word ("No", "不可以")   → should not be "supports"
  other    the gold answer of every other question on the same documents → should not be "supports"
  rest of page    its own gold answer against the other sentences of the gold page → should not be "supports"
  yes on others   the bare yes/no of every other yes/no question on the same documents → should not be "supports"
Groups: "same" (question and sentence in one language) and "across" (an English question on a
Chinese law or the reverse), for "other" by the other question's language. Tuning halves (tune, tune6) choose; the others confirm.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import evidence  # noqa: E402  (question_sets, TUNING)

from app.core.answer.support import across, supports  # noqa: E402

_YES = re.compile(r"^\s*(yes|可以|是的|能|有权|会)\b|^\s*(可以|是的|能|有权|会)", re.I)
_NO = re.compile(r"^\s*(no|不可以|不能|不会|无权|不)\b|^\s*(不可以|不能|不会|无权|不需要|否)", re.I)
_FLIP = {"yes": "No", "可以": "不可以", "是的": "不是", "能": "不能", "有权": "无权", "会": "不会"}


def card_sized(corpus: Path, gold: dict) -> str:
    """The gold quote as a card shows it: the whole sentences of its page that hold it."""
    return page_split(corpus, gold)[0]


def page_split(corpus: Path, gold: dict) -> tuple[str, list[str]]:
    """The gold quote card-sized, and the other sentences of its page (of 40+ characters, or 15+
    Chinese ones): the same topic's wrong clauses."""
    import pymupdf

    from app.core.answer.card_prompt import _span, page_sentences
    from app.core.textnorm import cjk_count
    with pymupdf.open(corpus / gold["doc"]) as doc:
        sentences = page_sentences(doc[gold["page"] - 1].get_text())
    span = _span(sentences, gold["quote"])
    if not span:
        return gold["quote"], []
    rest = sentences[:span[0]] + sentences[span[1] + 1:]
    return (" ".join(sentences[span[0]:span[1] + 1]),
            [t for t in rest if len(t) >= 40 or cjk_count(t) >= 15])


def bare(answer: str) -> tuple[str, str] | None:
    """(the bare yes/no word of a gold answer, its opposite), or None for no yes/no answer."""
    m = _YES.match(answer)
    if m:
        word = (m.group(1) or m.group(2))
        return word.capitalize() if word.isascii() else word, _FLIP[word.casefold()]
    return None


def rows_of(questions: list[dict], halves: dict, corpus: Path) -> list[dict]:
    qs = [q for q in questions if q.get("gold") and q.get("answer") and q.get("type") != "unanswerable"]
    out = []
    for q in qs:
        for g in q["gold"]:
            try:
                sentence, rest = page_split(corpus, g)
            except Exception:       # a gold doc this checkout lacks
                continue
            group = "across" if across(q["question"], sentence) else "same"
            row = {"id": q["id"], "half": halves[q["id"]], "group": group,
                   "own": supports(sentence, q["answer"], q["question"])}
            words = bare(q["answer"])
            if words:
                row["yes"] = supports(sentence, words[0], q["question"])
                row["flip"] = supports(sentence, words[1], q["question"])
            row["page"] = [supports(t, q["answer"], q["question"]) for t in rest]
            row["yes_other"] = [["across" if across(o["question"], sentence) else "same",
                                 supports(sentence, bare(o["answer"])[0], o["question"])]
                                for o in qs if o is not q and o["docs"] == q["docs"] and bare(o["answer"])]
            row["other"] = [["across" if across(o["question"], sentence) else "same",
                             supports(sentence, o["answer"], o["question"])]
                            for o in qs if o is not q and o["docs"] == q["docs"]]
            out.append(row)
    return out


def table(rows: list[dict]) -> str:
    lines = [f"{'halves':9s} {'group':7s} {'n':>4s} {'own':>6s} {'yes':>9s} {'flip':>9s} {'other':>11s}  contradicts own  yes on others  rest of page"]
    for label, keep in (("tuning", lambda h: h in evidence.TUNING), ("checking", lambda h: h not in evidence.TUNING)):
        for group in ("same", "across"):
            rs = [r for r in rows if keep(r["half"]) and r["group"] == group]
            others = [o for r in rows if keep(r["half"]) for g, o in r["other"] if g == group]
            yes_others = [o for r in rows if keep(r["half"]) for g, o in r["yes_other"] if g == group]
            page = [o for r in rs for o in r["page"]]
            if not rs:
                continue
            own = sum(r["own"] == "supports" for r in rs) / len(rs)
            yn = [r for r in rs if "yes" in r]
            yes = f"{sum(r['yes'] == 'supports' for r in yn)}/{len(yn)}"
            flip = f"{sum(r['flip'] == 'supports' for r in yn)}/{len(yn)}"
            other = f"{sum(o == 'supports' for o in others) / max(1, len(others)):.3f}/{len(others)}"
            lines.append(f"{label:9s} {group:7s} {len(rs):4d} {own:6.2f} {yes:>9s} {flip:>9s} {other:>11s}  "
                         f"{sum(r['own'] == 'contradicts' for r in rs):15d} "
                         f"{sum(o == 'supports' for o in yes_others) / max(1, len(yes_others)):.3f}/{len(yes_others)}"
                         f"{sum(o == 'supports' for o in page) / max(1, len(page)):9.3f}/{len(page)}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--bridge-off-too", action="store_true",
                    help="first the table without the dictionary across languages (support.BRIDGE off)")
    args = ap.parse_args()
    questions, halves = evidence.question_sets()
    if args.bridge_off_too:
        from app.core.answer import support as checked
        checked.BRIDGE = False
        print("without the dictionary across languages:")
        print(table(rows_of(questions, halves, common.CORPUS)))
        checked.BRIDGE = True
        print("with it (the app's setting):")
    rows = rows_of(questions, halves, common.CORPUS)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "support", "commit": common.git_commit(), "rows": rows},
                                        ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
