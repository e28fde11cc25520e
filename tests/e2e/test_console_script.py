"""The program as installed: the `pagewise` console script (pyproject's `app.cli:main`), `python -m
app` and the in-process runner the other CLI tests use print the same; every command the parser
knows has its function in the command table."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli, run_process
from tests.support.strict import strict


def test_every_command_the_parser_knows_has_a_function():
    from app.cli.commands import COMMANDS
    from app.cli.parser import build_parser
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == set(COMMANDS)


def console_script() -> Path:
    script = Path(sys.executable).with_name("pagewise")
    if not script.is_file():
        message = f"no `pagewise` console script next to {sys.executable} (`pip install -e .` makes it)"
        if strict():
            pytest.fail(message)
        pytest.skip(message)
    return script


def test_console_script_python_m_app_and_the_runner_print_the_same(tmp_path):
    script = console_script()
    plan = ("plan", "--cpu-only", "--ram-gib", "16", "--json")
    runs = [run_process(*plan, home=tmp_path, program=[str(script)]), run_process(*plan, home=tmp_path),
            run_cli(*plan, home=tmp_path)]
    assert [r.returncode for r in runs] == [0, 0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert json.loads(runs[0].stdout)["plan"]["engine"] == "llamacpp"
    missing = ("library", "remove", "42")
    runs = [run_process(*missing, home=tmp_path, program=[str(script)]), run_process(*missing, home=tmp_path),
            run_cli(*missing, home=tmp_path)]
    assert [r.returncode for r in runs] == [1, 1, 1]
    assert runs[0].stderr == runs[1].stderr == runs[2].stderr == (
        "pagewise: error: document 42 is not in the library (see `pagewise library list`)\n")
