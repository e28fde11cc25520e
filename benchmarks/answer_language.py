"""The answer's language (issue 33): Chinese questions answered with the language held by the
grammar (ours: the answer schema's pattern) against the prompt's request alone (baseline: the
same schema without the pattern), back to back per question in one engine, the embedded model.

    .venv/bin/python benchmarks/answer_language.py [--quick] [--set dev|second-zh|both]

Questions: every Chinese question of shared/eval/dev.jsonl (and --set second-zh: the
independent Chinese set), split into a tuning and a checking half (retrieval.split). Each is
asked twice in a fresh conversation — ours, then the baseline — so both read the same prompt.
Per half and side:
  in Chinese        the model's answer is written in Chinese (its first letter is Han)
  headline answer   the window would lead with the model's answer (its citations back it)
  … on a gold page  of those, a citation on a gold page (an answer the user can trust)
  … elsewhere       of those, no citation on a gold page (a wrong answer shown as the answer)
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import retrieval  # noqa: E402  (split)

HAN = re.compile(r"[\u4e00-\u9fff]")
LETTER = re.compile(r"[A-Za-z\u4e00-\u9fff]")
SETS = {"dev": common.EVAL, "second-zh": Path(__file__).resolve().parent / "eval" / "second-zh.jsonl"}


def chinese_questions(names: list[str]) -> list[dict]:
    out = []
    for name in names:
        for line in SETS[name].read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            if HAN.search(q["question"]):
                out.append(q)
    return out


def judged(answer, q: dict) -> dict:
    first = LETTER.search(answer.text or "")
    gold = {(Path(g["doc"]).name, g["page"]) for g in q.get("gold", [])}
    on_gold = any((Path(c.doc).name, c.page) in gold for c in answer.citations if c.verified)
    return {"text": (answer.text or "")[:120], "chinese": bool(first and HAN.fullmatch(first.group())),
            "headline": answer.headline, "on_gold": on_gold}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=["dev", "second-zh", "both"], default="dev")
    ap.add_argument("--quick", action="store_true", help="CI smoke run: 1 question")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    names = ["dev", "second-zh"] if args.set == "both" else [args.set]
    questions = chinese_questions(names)
    halves = retrieval.split(questions)
    if args.quick:
        questions = questions[:1]
    with common.temp_home("pagewise-bench-lang-"):
        from app.core.answer import prompts, qa
        from app.core.answer.conversation import Conversation
        from app.core.answer.evidence import find_evidence
        from app.core.library import Library
        from app.worker.runtime import EngineRuntime
        from app.service.planning import start_planned
        held = dict(prompts.ANSWER_LETTERS)
        lib, ids = Library(), {}
        rt = EngineRuntime()
        start_planned(rt)
        rows = []
        try:
            for n, q in enumerate(questions, 1):
                files = [common.CORPUS / d for d in q["docs"]]
                for f in files:
                    if f not in ids:
                        ids[f] = lib.add(f).id
                refs = [qa.DocRef(k, ids[f], f.name) for k, f in enumerate(files, 1)]
                row = {"id": q["id"], "half": halves[q["id"]], "type": q["type"]}
                evidence = find_evidence(lib, refs, q["question"])      # the cards, as the CLI and window show
                for side in ("ours", "baseline"):
                    prompts.ANSWER_LETTERS.clear()
                    if side == "ours":
                        prompts.ANSWER_LETTERS.update(held)
                    row[side] = judged(rt.ask(lib, refs, q["question"], conversation=Conversation(),
                                                     evidence=evidence), q)
                prompts.ANSWER_LETTERS.update(held)
                rows.append(row)
                print(f"  {n}/{len(questions)} {q['id']}: ours {row['ours']['text'][:40]!r} · "
                      f"baseline {row['baseline']['text'][:40]!r}", flush=True)
        finally:
            prompts.ANSWER_LETTERS.clear()
            prompts.ANSWER_LETTERS.update(held)
            rt.stop()
            lib.close()
    table = {}
    for half in ("tune", "check"):
        part = [r for r in rows if r["half"] == half]
        for side in ("ours", "baseline"):
            res = [r[side] for r in part]
            heads = [x for x in res if x["headline"] == "answer"]
            table[f"{half}/{side}"] = {"questions": len(res), "in_chinese": sum(x["chinese"] for x in res),
                                       "headline_answer": len(heads),
                                       "headline_on_gold": sum(x["on_gold"] for x in heads),
                                       "headline_elsewhere": sum(not x["on_gold"] for x in heads)}
    print("\nhalf   side      questions  in Chinese  headline answer  … on a gold page  … elsewhere")
    for key, t in table.items():
        half, side = key.split("/")
        print(f"{half:6} {side:9} {t['questions']:9}  {t['in_chinese']:10}  {t['headline_answer']:15}  "
              f"{t['headline_on_gold']:16}  {t['headline_elsewhere']:11}")
    common.write_json("answer_language", {"sets": names, "table": table, "rows": rows}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
