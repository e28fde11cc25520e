"""Running `pagewise` in tests, both ways returning a subprocess.CompletedProcess (returncode,
stdout, stderr) so a test reads the same whichever it uses.

- run_cli: `app.cli.main(argv)` in this process, stdout and stderr captured, stdin given, the
  environment (PAGEWISE_HOME and `env`) set for the call and put back after. No interpreter start
  and no model loaded twice: the default for tests of what a command does and prints.
- run_process: a real `python -m app …` process, for what only a process shows: its network
  connections (strace), its umask, a sitecustomize or keyring backend chosen at start-up, being
  killed, the console script itself. app_argv is its command line, for tests that wrap it
  (unshare, strace) or start it with Popen.
"""
from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]


def app_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]


def _environment(home: Path | None, env: dict[str, str | None] | None) -> dict[str, str | None]:
    """The variables a run changes: PAGEWISE_HOME when given, then `env` (None: unset it)."""
    return {**({"PAGEWISE_HOME": str(home)} if home is not None else {}), **(env or {})}


def run_process(*args: str, home: Path | None = None, env: dict[str, str | None] | None = None,
                stdin: str | None = None, timeout: float = 300, program: list[str] | None = None,
                **kwargs) -> subprocess.CompletedProcess:
    """`python -m app ARGS…` (or `program ARGS…`, e.g. the console script) from the repo root;
    other keyword arguments go to subprocess.run (preexec_fn, …)."""
    full_env = dict(os.environ)
    for key, value in _environment(home, env).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    argv = [*program, *args] if program else app_argv(*args)
    return subprocess.run(argv, capture_output=True, text=True, input=stdin, env=full_env, cwd=ROOT,
                          timeout=timeout, **kwargs)


class _Captured(io.StringIO):
    def close(self) -> None:
        """Kept open: main closes stderr when stdout's reader left (BrokenPipeError)."""


@contextmanager
def _patched_environ(changes: dict[str, str | None]):
    with mock.patch.dict(os.environ):          # the whole environment back afterwards
        for key, value in changes.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield


@contextmanager
def _own_log_handlers():
    """main adds a handler for the log file of this run's PAGEWISE_HOME: removed and closed after,
    so the next run logs to its own home only."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


def run_cli(*args: str, home: Path | None = None, env: dict[str, str | None] | None = None,
            stdin: str = "") -> subprocess.CompletedProcess:
    """`pagewise ARGS…` as app.cli.main(argv) in this process."""
    from app.cli import main

    out, err = _Captured(), _Captured()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with _patched_environ(_environment(home, env)), _own_log_handlers(), \
                redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:        # argparse: --help (0) or a usage error (2)
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
    finally:
        sys.stdin = old_stdin
    return subprocess.CompletedProcess(["pagewise", *args], code, out.getvalue(), err.getvalue())
