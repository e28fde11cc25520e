"""The comparison table in the transcript: one row per topic, one column per document, each
cell the clause heading, the quote as printed and a page link that jumps that document's pane
to the page with the quote highlighted (href "evidence:<entry>:<card>", the evidence cards'
click path); the model's summary row after it only when its citations back it."""
from __future__ import annotations

import html
from pathlib import Path

from app.qt.evidence_view import heading

CELL = "padding:4px 6px; border:1px solid #c8d6e5; vertical-align:top"
HEAD = "padding:4px 6px; border:1px solid #c8d6e5; background-color:#eaf2fb"
TOPIC = "padding:3px 6px; border:1px solid #c8d6e5; background-color:#f3f7fc; color:#1b4f72"
NO_SUMMARY = "The model's summary is not shown: its citations do not back it."
SIDEWAYS = 3          # more documents than this: columns of COLUMN_PX each, the table scrolls sideways
COLUMN_PX = 260


def _text(value: str) -> str:
    return html.escape(value).replace("\n", "<br>")


def table_html(index: int, evidence) -> str:
    """Entry `index`'s comparison table (evidence: app.core.compare.clauses.TableEvidence)."""
    table = evidence.table
    cards = {id(c): n for n, c in enumerate(evidence.cards)}
    many = len(table.refs) > SIDEWAYS     # each column readable; the transcript scrolls sideways
    width, whole = (f"{COLUMN_PX}", f"{COLUMN_PX * len(table.refs)}") if many else (f"{100 // len(table.refs)}%", "100%")
    rows = ["<tr>" + "".join(f"<th style='{HEAD}' width='{width}'>{_text(Path(r.label).name)}</th>"
                             for r in table.refs) + "</tr>"]
    for topic, row in zip(table.topics, table.rows):     # the topic across the row: each document keeps half
        rows.append(f"<tr><td colspan='{len(row)}' style='{TOPIC}'><b>{_text(topic.label(table.lang))}</b></td></tr>")
        rows.append("<tr>" + "".join(_cell(index, cell, cards) for cell in row) + "</tr>")
    note = (f"<p style='color:gray; font-size:small; margin:0 0 4px 0'>found in {table.ms / 1000:.2f} s, "
            "from the search alone, before the model reads anything; click a page to see it</p>")
    return (heading("Clauses side by side") + note +
            f"<table width='{whole}' cellspacing='0' cellpadding='0' style='border-collapse:collapse'>"
            + "".join(rows) + "</table>")


def _cell(index: int, cell, cards: dict) -> str:
    card = cell.card
    if card is None:
        return f"<td style='{CELL}; color:gray'><i>not found</i></td>"
    n = cards[id(card)]
    mark = "✓ verified" if cell.verified else "⚠ not verified"
    clause = f"<b>{_text(card.clause)}</b><br>" if card.clause else ""
    return (f"<td style='{CELL}'>{clause}\u201c{_text(card.quote)}\u201d<br>"
            f"<a href='evidence:{index}:{n}' style='color:#1b4f72'>p. {card.page}</a> "
            f"<span style='color:{'#1e8449' if cell.verified else '#b9770e'}; font-size:small'>{mark}</span></td>")


def model_html(entry, markdown_html) -> str:
    """The model's row under the table: its summary when its citations back it, one grey line
    when they do not, the progress while it is written."""
    if entry.state == "done":
        if entry.text and entry.headline == "answer":
            return heading("Summary (model, backed by its citations)", "#1e8449") + markdown_html(entry.text)
        return f"<p style='color:gray; font-size:small; margin-top:6px'>{html.escape(NO_SUMMARY)}</p>"
    if entry.state == "streaming":
        return f"<p style='color:gray'>{html.escape(entry.status) or 'the model is reading the clauses…'}</p>"
    return ""


def is_table(evidence) -> bool:
    return getattr(evidence, "table", None) is not None
