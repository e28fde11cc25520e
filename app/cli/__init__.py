"""The command line (ARCHITECTURE §7): `pagewise` and `python -m app`.

parser.py reads the arguments; dispatch.py runs the command named in them from the table in
commands/__init__.py (one module per command) and prints its result or its one-line error."""
from app.cli.dispatch import main

__all__ = ["main"]
