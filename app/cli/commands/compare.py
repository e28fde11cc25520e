"""`pagewise compare A.pdf B.pdf [C.pdf …] [--topics …] [--summary] [--json|--csv] [--markdown FILE]`:
each topic's best clause of every document side by side, quoted as printed with its page, from
the search alone (no model); with --summary the model's row after it, kept only when its
citations back it. --csv prints the table for a spreadsheet, --markdown writes it to a file."""
from __future__ import annotations

import time
from pathlib import Path

from app.cli.documents import add_all, doc_refs, open_library
from app.failure_messages import UserError
from app.service import Assistant


def run(args):
    from app.core.compare.table_export import to_csv, to_markdown
    if len(args.files) < 2:
        raise UserError(f"compare takes two PDF files or more, not {len(args.files)}")
    twice = next((f for i, f in enumerate(args.files) if f in args.files[:i]), None)
    if twice:
        raise UserError(f"compare takes different PDF files: {twice} is named twice")
    asked = time.perf_counter()
    lib = open_library()
    infos = add_all(lib, args.files, args.password, quiet=args.json or args.csv)
    refs = doc_refs(infos, args.files)
    assistant = Assistant(lib, model_id=args.model)
    table = assistant.compare(refs, ", ".join(args.topics) if args.topics else None, started=time.perf_counter())
    data = table.to_dict()
    data["total_s"] = round(time.perf_counter() - asked, 2)
    if args.markdown:
        Path(args.markdown).write_text(to_markdown(table), encoding="utf-8")
    if args.csv:
        print(to_csv(table), end="", flush=True)
    elif not args.json:
        print(table_text(table), flush=True)
    if args.summary:
        data["model"] = _model_row(assistant, refs, table)
        if not (args.json or args.csv):
            print(summary_text(data["model"]), flush=True)
    return data, None


def _model_row(assistant, refs, table) -> dict | None:
    try:
        assistant.start()
        return assistant.compare_summary(refs, table)
    finally:
        assistant.stop()


def table_text(table) -> str:
    lines = [f"{table.question}  (from the search alone, {table.ms / 1000:.2f} s)"]
    for topic, row in zip(table.topics, table.rows):
        lines.append(f"\n{topic.label(table.lang)}")
        for cell in row:
            if cell.card is None:
                lines.append(f"  {cell.ref.label}: not found")
                continue
            mark = "verified" if cell.verified else "NOT verified"
            clause = f" · {cell.card.clause}" if cell.card.clause else ""
            lines.append(f"  {cell.ref.label} p. {cell.card.page}{clause} [{mark}]")
            lines.append(f"       \u201c{cell.card.quote}\u201d")
    return "\n".join(lines)


def summary_text(row: dict | None) -> str:
    if row is None:
        return "\nThe model's summary is not shown: its citations do not back it."
    cites = "; ".join(f"{c['doc']} p. {c['page']}" for c in row["citations"])
    return f"\nSummary (model): {row['summary']}\n  sources: {cites}"
