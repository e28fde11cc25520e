"""The library: the SQLite file (schema, migrations) and the Library that reads and writes it."""
from app.core.library.library import Exchange, Library

__all__ = ["Exchange", "Library"]
