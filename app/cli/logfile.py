"""The log file every command writes (0600: it names documents and questions)."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from app.core import paths


def setup_logging() -> Path | None:
    log_file = paths.log_dir() / "pagewise.log"
    try:   # 0600: the log names documents and questions; an unwritable folder is no reason to stop
        # backslashreplace: a file name that is not UTF-8 (Latin-1 bytes, kept as lone surrogates)
        # is logged as \udce9, not a 40-line "--- Logging error ---" traceback on stderr
        handler = logging.FileHandler(paths.private_file(log_file), encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        print(f"pagewise: warning: cannot write the log {log_file} ({exc.strerror or exc}); "
              "continuing without it", file=sys.stderr)
        logging.getLogger().addHandler(logging.NullHandler())   # that one line, not one per later warning
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return log_file
