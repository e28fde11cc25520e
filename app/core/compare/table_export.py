"""The clause table as files: CSV (one row per topic, one column per document, for a
spreadsheet) and Markdown; each cell the clause as printed, with its clause number and page,
or "not found"."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from app.core.compare.clauses import Cell, ClauseTable

NOT_FOUND = "not found"


def cell_text(cell: Cell) -> str:
    """ "p. 7 · Section 12.1 Fees: “Customer will pay …”" (quote as printed), or "not found"."""
    if cell.card is None:
        return NOT_FOUND
    clause = f" · {cell.card.clause}" if cell.card.clause else ""
    unverified = "" if cell.verified else " [NOT verified]"
    return f"p. {cell.card.page}{clause}: \u201c{' '.join(cell.card.quote.split())}\u201d{unverified}"


def to_csv(table: ClauseTable) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["topic"] + [ref.label for ref in table.refs])
    for topic, row in zip(table.topics, table.rows):
        writer.writerow([topic.label(table.lang)] + [cell_text(c) for c in row])
    return out.getvalue()


def to_markdown(table: ClauseTable) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|").replace("*", "\\*")
    lines = [f"# {table.question}", "",
             "| topic | " + " | ".join(esc(Path(r.label).name) for r in table.refs) + " |",
             "|---" * (len(table.refs) + 1) + "|"]
    for topic, row in zip(table.topics, table.rows):
        lines.append(f"| {esc(topic.label(table.lang))} | " + " | ".join(esc(cell_text(c)) for c in row) + " |")
    return "\n".join(lines) + "\n"
