"""Under ./run-tests and CI (PAGEWISE_STRICT=1, or CI) a test whose corpus or installed module is
missing fails with a one-line reason; elsewhere it skips. A clone without ../shared/corpus must not
run green there."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.support import ROOT

NEEDS = '''
from tests.support.corpus import corpus_path, dev_questions
from tests.support.strict import need_module


def test_the_corpus_fixture(corpus):
    pass


def test_a_corpus_file():
    corpus_path("contracts-en/common-paper-mnda.pdf")


def test_the_questions():
    dev_questions()


def test_an_installed_module():
    need_module("pagewise_no_such_module", "the set-up")
'''


def run_pytest(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """pytest on NEEDS, with tests/conftest.py's fixtures and the corpus pointed at a missing folder."""
    (tmp_path / "test_needs.py").write_text(NEEDS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "PAGEWISE_STRICT")}
    base.update(PYTHONPATH=str(ROOT), COLUMNS="1000", PAGEWISE_CORPUS=str(tmp_path / "no-corpus" / "corpus"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           "-c", str(tmp_path / "pytest.ini"), str(tmp_path / "test_needs.py")],
                          cwd=tmp_path, env=base, capture_output=True, text=True, timeout=120)


def test_strict_mode_fails_without_the_corpus(tmp_path):
    res = run_pytest(tmp_path, PAGEWISE_STRICT="1")
    assert res.returncode == 1, res.stdout + res.stderr
    # a fixture that fails is an error of the test, a helper that fails in the test a failure
    assert "3 failed, 1 error" in res.stdout and "skipped" not in res.stdout, res.stdout
    missing = tmp_path / "no-corpus" / "corpus"
    assert f"ERROR test_needs.py::test_the_corpus_fixture - Failed: corpus not found: {missing} " in res.stdout, res.stdout
    assert "FAILED test_needs.py::test_an_installed_module - Failed: cannot import pagewise_no_such_module" \
        in res.stdout, res.stdout


def test_ci_is_strict_too(tmp_path):
    res = run_pytest(tmp_path, CI="true")
    assert res.returncode == 1 and "3 failed, 1 error" in res.stdout, res.stdout


def test_a_developer_machine_skips_with_the_reason(tmp_path):
    res = run_pytest(tmp_path)
    assert res.returncode == 0 and "4 skipped" in res.stdout, res.stdout + res.stderr
    assert "corpus not found" in res.stdout, res.stdout
