"""Judge a device run's answers here (no device time): each `app_ask.py` record's questions
against their gold in the eval set, as benchmarks/answers.py judges (benchmarks/judge.py), with
the engine that answered, the citations' documents and pages against the gold's, and TTFT
against the bare uncached request of the same prompt (app_ask.py --bare).

    .venv/bin/python benchmarks/gpu/judge_run.py RESULTS.jsonl [MORE.jsonl …]

A question is found in /work/shared/eval/dev.jsonl and benchmarks/eval/second-{en,zh}.jsonl by
its exact text; the Chinese question of real_steps.sh asks dev-026's fact (ZH_SAME below).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import judge  # noqa: E402

EVAL = [Path(os.environ.get("PAGEWISE_EVAL", "/work/shared/eval/dev.jsonl")),
        ROOT / "benchmarks" / "eval" / "second-en.jsonl", ROOT / "benchmarks" / "eval" / "second-zh.jsonl"]
ZH_SAME = {"根据数据处理协议，发生安全事件后，处理方最迟应在多长时间内通知客户？": "dev-026"}


def gold_by_question() -> dict[str, dict]:
    rows = [json.loads(line) for path in EVAL if path.is_file() for line in path.read_text("utf-8").splitlines()
            if line.strip()]
    by_id = {r["id"]: r for r in rows}
    found = {r["question"]: r for r in rows}
    for text, qid in ZH_SAME.items():
        if qid in by_id:
            found[text] = by_id[qid]
    return found


def questions(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-q", "--question")]


def pages(citations: list[dict]) -> set[tuple[str, int]]:
    return {(Path(str(c.get("doc", ""))).name, int(c.get("page") or 0)) for c in citations or []}


def judge_record(rec: dict, gold: dict[str, dict]) -> list[dict]:
    ans = rec.get("answer") or {}
    answers = ans["answers"] if isinstance(ans.get("answers"), list) else [ans]
    by = rec.get("answered_by") or []
    rows = []
    for i, (q, a) in enumerate(zip(questions(rec.get("argv", [])), answers)):
        g = gold.get(q)
        text = a.get("answer") or ""
        row = {"tag": rec.get("tag"), "n": i + 1, "id": g["id"] if g else "?", "engine": by[i] if i < len(by) else "",
               "answer": text[:140].replace("\n", " "), "warnings": len(a.get("warnings") or [])}
        if g is not None:
            v = judge.judge(q, g.get("answer", ""), text, g.get("type", ""), g.get("answerable") is False)
            want = pages(g.get("gold") or [])
            got = pages(a.get("citations"))
            row.update(right=v.right, refused=v.refused, why=v.why, gold_pages=sorted(want), cited=sorted(got),
                       cites_gold=bool(want & got),
                       verified=[c.get("verified") for c in a.get("citations") or []])
        rows.append(row)
    app, salted = rec.get("app_ttft") or [], rec.get("bare_salted") or []
    for i, (t, bare) in enumerate(zip(app, salted)):
        if i < len(rows) and bare:
            rows[i]["ttft_vs_bare"] = round(t / statistics.median(bare), 2)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+", type=Path)
    a = ap.parse_args(argv)
    gold = gold_by_question()
    for path in a.records:
        for line in path.read_text("utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            rows = judge_record(rec, gold)
            right = sum(1 for r in rows if r.get("right"))
            cites = sum(1 for r in rows if r.get("cites_gold"))
            print(f"== {rec.get('tag')}: {right} of {len(rows)} right, {cites} cite the gold page; "
                  f"kills {rec.get('kills')}, comeback {rec.get('comeback')}")
            for r in rows:
                print(json.dumps(r, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
