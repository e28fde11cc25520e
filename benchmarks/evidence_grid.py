"""The cards' ranking constants (app/core/answer/evidence/cards.py) chosen on the tuning halves by
coordinate search, every half's figures printed beside each step's choice.

    .venv/bin/python benchmarks/evidence_grid.py [--rounds N] [--set NAME=VALUE …]

Questions: those of benchmarks/evidence.py, and the sixth set (benchmarks/eval/sixth.jsonl, written
apart from this code as tuning material for paraphrased questions and "not addressed"), split into its
own tuning half ("tune6") and checking half ("check6") by the project's rule (retrieval.split).
The objective, on the tuning halves (tune + tune6) only: answerable questions whose cards quote the
gold sentence plus those whose gold page is among the first 3 cards. Each constant in turn takes the
value of its list that scores best (ties keep the current value); rounds repeat until nothing moves.
Nothing is written into the code: the run prints what to set, and its figures on every half.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import evidence  # noqa: E402

from app.core.answer.evidence import cards as evidence_cards  # noqa: E402
from app.core.library import Library  # noqa: E402

TUNING, HALVES = evidence.TUNING, evidence.HALVES
# The constants searched and the values each may take.
SPACE = {
    "VECTOR_WEIGHT": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0],
    "COS_FLOOR": [0.7, 0.72, 0.75, 0.78, 0.8],
    "CLAUSE_WEIGHT": [0.0, 0.15, 0.3, 0.5, 0.8],
    "PAGE_WEIGHT": [0.25, 0.5, 0.75, 1.0, 1.5],
    "CHUNK_WEIGHT": [0.0, 0.1, 0.2, 0.4],
    "SHAPE_WEIGHT": [0.0, 0.25, 0.5, 0.75],
    "SECOND_CARD": [0.1, 0.3, 0.5],
    "MEANING_MIN": [0.4, 0.6, 0.8],
}


def figures(rows: list[dict], halves: dict[str, str]) -> dict[str, dict]:
    """Per half: answerable n, gold sentence and page in 3 counts, per language group too."""
    out = {}
    for half in HALVES:
        ans = [r for r in rows if halves[r["id"]] == half and r["answerable"]]
        if not ans:
            continue
        out[half] = {"n": len(ans), "sentence": sum(r["sentence"] for r in ans), "at3": sum(r["at3"] for r in ans)}
        for g in ("en", "zh", "cross-lingual"):
            gs = [r for r in ans if g in r["groups"]]
            out[half][g] = (len(gs), sum(r["sentence"] for r in gs), sum(r["at3"] for r in gs))
    return out


def objective(fig: dict) -> int:
    return sum(fig[h]["sentence"] + fig[h]["at3"] for h in TUNING if h in fig)


def line(fig: dict) -> str:
    parts = []
    for h, f in fig.items():
        groups = " ".join(f"{g[:2]} {s / n:.2f}/{a / n:.2f}" for g in ("en", "zh", "cross-lingual")
                          for n, s, a in [f[g]] if n)
        parts.append(f"{h} {f['sentence'] / f['n']:.2f}/{f['at3'] / f['n']:.2f} ({groups})")
    return " | ".join(parts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                    help="start from these values (cards.py constants)")
    ap.add_argument("--only-report", action="store_true", help="print the figures of the starting values only")
    args = ap.parse_args(argv)
    evidence._apply(args.settings)
    questions, halves = evidence.question_sets()
    tuning = [q for q in questions if halves[q["id"]] in TUNING]
    docs = sorted({d for q in questions for d in q["docs"]})
    with tempfile.TemporaryDirectory() as tmp, common.temp_home("pagewise-evidence-grid-"):
        lib = Library(Path(tmp) / "library.sqlite")
        ids = {d: lib.add(common.CORPUS / d).id for d in docs}
        evidence.load_vectors(lib, questions, ids)
        counts = {h: sum(1 for q in questions if halves[q["id"]] == h and q["gold"]) for h in HALVES}
        print("answerable questions per half:", counts, flush=True)

        def run(subset):
            return figures(evidence.run_questions(lib, subset, ids), halves)

        start = run(questions)
        print("start:", {k: getattr(evidence_cards, k) for k in SPACE}, flush=True)
        print("  ", line(start), flush=True)
        if args.only_report:
            return
        current = objective(start)
        for rnd in range(args.rounds):
            moved = False
            for name, values in SPACE.items():
                keep = getattr(evidence_cards, name)
                scored = []
                for v in values:
                    setattr(evidence_cards, name, type(keep)(v))
                    scored.append((objective(run(tuning)), v == keep, v))
                best = max(scored)
                setattr(evidence_cards, name, type(keep)(best[2]))
                if best[0] > current:
                    moved = True
                    current = best[0]
                print(f"round {rnd + 1} {name}: " + " ".join(f"{v}:{s}" for s, _, v in scored)
                      + f" -> {best[2]} (objective {current})", flush=True)
            if not moved:
                break
        chosen = {k: getattr(evidence_cards, k) for k in SPACE}
        print("chosen:", chosen, flush=True)
        print("  ", line(run(questions)), flush=True)
        lib.close()


if __name__ == "__main__":
    main()
