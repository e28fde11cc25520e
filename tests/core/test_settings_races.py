"""`pagewise settings set` from several processes at once, and into a home it cannot write.

Before: two `settings set` at once each read settings.toml, changed their key and wrote it back;
one of the two values was lost in 7 of 10 rounds, both rc 0. A read-only home gave a raw OSError.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import tomllib

from tests.support.cli import ROOT, app_argv

CHANGES = {"theme": "dark", "rerank": "on", "remote_model": "team-model", "interface_language": "zh",
           "context_cap": "4096", "remote_url": "http://127.0.0.1:9/v1"}


def test_concurrent_settings_changes_are_all_kept(tmp_path):
    for round_ in range(3):
        home = tmp_path / f"home{round_}"
        env = {**os.environ, "PAGEWISE_HOME": str(home), "PYTHONPATH": str(ROOT)}
        procs = [subprocess.Popen(app_argv("settings", "set", key, value), cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for key, value in CHANGES.items()]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        saved = tomllib.loads((home / "config" / "settings.toml").read_text())
        missing = {k for k in CHANGES if k not in saved}
        assert not missing, f"round {round_}: lost {sorted(missing)}"


def _set_many(home: str, key: str, values: list[str], start) -> None:
    os.environ["PAGEWISE_HOME"] = home
    from app.core import settings
    start.wait()
    for value in values:
        settings.set_value(key, value)


@pytest.mark.skipif(os.name != "posix", reason="fork")
def test_processes_changing_different_keys_in_a_tight_loop_lose_nothing(tmp_path):
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()
    plans = {"remote_model": [f"model-{i}" for i in range(25)], "remote_url": [f"http://h{i}:1/v1" for i in range(25)],
             "theme": ["dark", "light"] * 12 + ["dark"], "rerank": ["on", "off"] * 12 + ["on"]}
    procs = [ctx.Process(target=_set_many, args=(str(tmp_path / "home"), key, values, start))
             for key, values in plans.items()]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    saved = tomllib.loads((tmp_path / "home" / "config" / "settings.toml").read_text())
    lost = {key: saved.get(key) for key, values in plans.items() if saved.get(key) != values[-1]}
    assert not lost, f"last values lost: {lost}"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to drop the permission override")
def test_a_read_only_home_is_one_line(tmp_path):
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    for folder in (home / "config", home):       # another account's, read-only
        folder.chmod(0o555)
        os.chown(folder, 65534, -1)
    env = {**os.environ, "PAGEWISE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    # root without the capabilities that bypass permissions: they apply as to any account
    caps = "-dac_override,-dac_read_search,-fowner"
    run = subprocess.run(["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", "--",
                          *app_argv("settings", "set", "theme", "dark")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert "Traceback" not in run.stderr and all(line.startswith("pagewise: ") for line in lines), run.stderr
    assert lines[-1] == (f"pagewise: error: cannot write the settings ({home / 'config' / 'settings.toml'}): "
                         "permission denied")
