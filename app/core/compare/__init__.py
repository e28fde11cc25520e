"""Compare clauses, evidence first: for each topic (termination, liability, payment …) the
best clause of each document side by side, quoted as printed with its page, from the search
alone; the model's summary row after it, kept only when its citations back it. Also what changed
between two versions of one document (versions.py: clauses aligned, words diffed, material
changes first), from the text and structure alone."""
from app.core.compare.clauses import Cell, ClauseTable, compare_clauses
from app.core.compare.topics import TOPICS, Topic, parse_topics, short_question

__all__ = ["Cell", "ClauseTable", "TOPICS", "Topic", "compare_clauses", "parse_topics", "short_question"]
