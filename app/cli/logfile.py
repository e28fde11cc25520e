"""The log file every command writes (0600: it names documents and questions)."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from app.core import paths


class _LogFile(logging.FileHandler):
    """The log file, which may stop being writable mid-command (a full disk): then one warning
    line on stderr and no more logging, not logging's own traceback for every record."""
    broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        if self.broken:
            return
        self.broken = True
        err = sys.exc_info()[1]
        why = getattr(err, "strerror", None) or err
        print(f"pagewise: warning: cannot write the log {self.baseFilename} ({why}); continuing without it",
              file=sys.stderr)


def setup_logging() -> Path | None:
    log_file = paths.log_dir() / "pagewise.log"
    try:   # 0600: the log names documents and questions; an unwritable folder is no reason to stop
        # backslashreplace: a file name that is not UTF-8 (Latin-1 bytes, kept as lone surrogates)
        # is logged as \udce9, not a 40-line "--- Logging error ---" traceback on stderr
        handler = _LogFile(paths.private_file(log_file), encoding="utf-8", errors="backslashreplace")
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
