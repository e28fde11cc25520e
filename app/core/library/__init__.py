"""The library: the SQLite file (schema, migrations) and the Library that reads and writes it."""
from app.core.library.library import ConversationSummary, Exchange, Library

__all__ = ["ConversationSummary", "Exchange", "Library"]
