"""settings.toml, the one atomic writer, and secrets through a real keyring backend."""
from __future__ import annotations

import json
import logging
import os
import stat
import tomllib
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest

from app.core import settings
from app.core.answer.reading_memory import ReadingMemory
from app.core.failures import BadInput, FailureKind, kind_of
from app.core.plan.hardware import Hardware
from app.core.plan.plan_history import PlanHistory
from app.core.settings import Settings, atomic_write
from tests.support.file_keyring import FileKeyring, keyring_backend


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


# --- settings.toml --------------------------------------------------------------------------------
def test_defaults_when_missing():
    assert not settings.settings_path().exists()
    assert settings.load() == Settings()
    assert Settings().engine == "auto" and Settings().threads == 0
    assert Settings().first_token_budget_s is None and Settings().remember_pdf_passwords is False
    assert Settings().first_token_budget(on_gpu=False) == 10.0 and Settings().first_token_budget(on_gpu=True) == 3.0
    assert Settings(first_token_budget_s=5.0).first_token_budget(on_gpu=True) == 5.0


def test_round_trip_through_the_toml_file(pagewise_home):
    s = Settings(engine="remote", remote_url="https://llm.example/v1", remote_model="qwen",
                 threads=6, first_token_budget_s=7.5, context_cap=16384, theme="dark",
                 remember_pdf_passwords=True)
    settings.save(s)
    path = settings.settings_path()
    assert path == pagewise_home / "config" / "settings.toml"
    assert 'engine = "remote"' in path.read_text(encoding="utf-8")
    assert settings.load() == s
    assert settings.get("threads") == 6


def test_corrupt_file_gives_defaults_and_a_warning(caplog):
    settings.settings_path().write_text('engine = "vllm\nthreads = [', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="app.core.storage"):
        assert settings.load() == Settings()
    assert "is damaged" in caplog.text and "Kept: nothing" in caplog.text


def test_a_file_broken_by_one_character_keeps_its_values_and_a_copy(tmp_path):
    """Issue 32, point 5: one stray character made every value the default, said only in the log,
    and the next `settings set` rewrote the file from defaults."""
    home = tmp_path / "home"
    path = home / "config" / "settings.toml"
    path.parent.mkdir(parents=True)
    text = ('threads = 3\ntheme = "dark"\nrerank = "on"\nremote_url = "http://127.0.0.1:9/v1"\n'
            'context_cap = 4096"\n')                                  # the one character
    path.write_text(text, encoding="utf-8")
    shown = pagewise_settings("get", "--json", home=home, keyring_file=None)
    assert shown.returncode == 0 and "is damaged" in shown.stderr and "Kept: threads = 3" in shown.stderr
    assert json.loads(shown.stdout)["settings"]["theme"] == "dark"
    res = pagewise_settings("set", "engine", "llamacpp", home=home, keyring_file=None)
    assert res.returncode == 0, res.stderr
    saved = tomllib.loads(path.read_text(encoding="utf-8"))
    assert saved == {"engine": "llamacpp", "threads": 3, "context_cap": 0, "theme": "dark",
                     "remember_pdf_passwords": False, "remote_url": "http://127.0.0.1:9/v1",
                     "remote_model": "", "rerank": "on", "interface_language": "auto", "judge_cards": "auto",
                     "rewrite_question": "auto"}
    copies = list(path.parent.glob("settings.toml.damaged-*"))
    assert [c.read_text(encoding="utf-8") for c in copies] == [text] and copies[0].name in shown.stderr


def test_settings_toml_a_folder_is_one_line(tmp_path):
    home = tmp_path / "home"
    (home / "config" / "settings.toml").mkdir(parents=True)
    res = pagewise_settings("set", "threads", "2", home=home, keyring_file=None)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == (
        f"pagewise: error: {home / 'config' / 'settings.toml'} is a folder, not a file: "
        "move it away, then set the value again")
    shown = pagewise_settings("get", "--json", home=home, keyring_file=None)
    assert shown.returncode == 0 and "is a folder" in shown.stderr


def test_bad_values_in_the_file_fall_back_one_by_one(caplog):
    settings.settings_path().write_text(
        'engine = "warp"\nthreads = 4\nfirst_token_budget_s = -1\nfuture_key = true\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="app.core.settings"):
        s = settings.load()
    assert s == Settings(threads=4)               # unknown key ignored, bad values defaulted
    assert "engine" in caplog.text and "first_token_budget_s" in caplog.text


def test_set_value_parses_to_the_field_type():
    assert settings.set_value("threads", " 8 ").threads == 8
    assert settings.set_value("first_token_budget_s", "4").first_token_budget_s == 4.0
    assert settings.set_value("engine", "llamacpp").engine == "llamacpp"
    assert settings.set_value("remote_url", "http://127.0.0.1:8000/v1/").remote_url == "http://127.0.0.1:8000/v1"
    assert settings.set_value("context_cap", "16384").context_cap == 16384
    assert settings.set_value("theme", "dark").theme == "dark"
    assert settings.set_value("remember_pdf_passwords", "on").remember_pdf_passwords is True
    assert settings.set_value("rerank", "on").rerank == "on"
    saved = settings.load()
    assert (saved.threads, saved.first_token_budget_s, saved.engine) == (8, 4.0, "llamacpp")
    assert isinstance(saved.first_token_budget_s, float)
    assert settings.set_value("first_token_budget_s", "auto").first_token_budget_s is None
    assert "first_token_budget_s" not in settings.settings_path().read_text()   # unset = absent
    assert settings.load().first_token_budget(on_gpu=False) == 10.0


@pytest.mark.parametrize("key, text", [
    ("colour", "blue"), ("engine", "warp"), ("threads", "-1"), ("threads", "two"),
    ("threads", "1.5"), ("first_token_budget_s", "0"), ("first_token_budget_s", "nan"),
    ("first_token_budget_s", "soon"), ("remote_url", "ftp://x"), ("theme", "pink"),
    ("context_cap", "100"), ("remember_pdf_passwords", "maybe"), ("ttft_budget_s", "4"),
    ("rerank", "sometimes"),
])
def test_set_value_refuses_bad_keys_and_values(key, text):
    with pytest.raises(BadInput) as info:
        settings.set_value(key, text)
    assert kind_of(info.value) is FailureKind.USER_INPUT
    assert "\n" not in str(info.value) and str(info.value)
    assert not settings.settings_path().exists()  # nothing saved on a refusal


def test_get_unknown_key():
    with pytest.raises(BadInput):
        settings.get("colour")


# --- the atomic writer ----------------------------------------------------------------------------
def test_atomic_write_leaves_no_temp_files_and_sets_0600(tmp_path):
    target = tmp_path / "new" / "file.json"
    atomic_write(target, "hello")
    atomic_write(target, b"bytes too")
    assert target.read_bytes() == b"bytes too"
    assert files_under(tmp_path) == [target]
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700


def test_failure_mid_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "file.json"
    atomic_write(target, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert files_under(tmp_path) == [target]


def test_plan_history_round_trips_through_the_writer(tmp_path):
    from app.core.plan.planner import from_dict
    from app.core.plan.types import Plan
    hw = Hardware((), 24 << 30, 21 << 30, 2, ("avx2",))
    worked = Plan(engine="llamacpp", model_id="smollm2", weights_format="gguf", max_model_len=8192,
                  rung=2, reasons=("why",))
    path = tmp_path / "h.json"
    PlanHistory(path).record(hw, "planned", worked, limit=4096)
    entry = PlanHistory(path).lookup(hw, "planned")
    assert entry["limit"] == 4096 and from_dict(entry["plan"]) == Plan(
        engine="llamacpp", model_id="smollm2", weights_format="gguf", max_model_len=8192, rung=2)  # no reasons kept
    assert json.loads(path.read_text(encoding="utf-8"))["fingerprint"] == "cpu:2c/24GiB"
    PlanHistory(path).forget(hw)
    assert PlanHistory(path).lookup(hw, "planned") is None
    assert files_under(tmp_path) == [path]        # no fixed-name .tmp left behind


def test_reading_memory_round_trips_through_the_writer(tmp_path):
    path = tmp_path / "memory.json"
    mem = ReadingMemory(path)
    mem.record_prefill("m", 1000, 2.0)
    mem.mark_read("m", [3, 1])
    again = ReadingMemory(path)
    assert again.prefill_tps("m") == 500.0 and again.was_read("m", [1, 3])
    assert json.loads(path.read_text(encoding="utf-8"))["read"] == {"m:1,3": True}
    assert files_under(tmp_path) == [path]


# --- secrets --------------------------------------------------------------------------------------
@pytest.fixture
def no_keyring():
    with keyring_backend(keyring.backends.fail.Keyring()):
        yield


def test_secrets_through_a_real_backend(file_keyring):
    assert settings.get_secret("remote-api-key") is None
    settings.set_secret("remote-api-key", "sk-123")
    assert settings.get_secret("remote-api-key") == "sk-123"
    assert json.loads(file_keyring.path.read_text())["Pagewise"] == {"remote-api-key": "sk-123"}
    settings.delete_secret("remote-api-key")
    settings.delete_secret("remote-api-key")      # already gone: no error
    assert settings.get_secret("remote-api-key") is None


def test_no_keyring_refuses_and_writes_nothing(no_keyring, pagewise_home, tmp_path):
    for call in (lambda: settings.set_secret("hf-token", "hf_abc"),
                 lambda: settings.get_secret("hf-token"),
                 lambda: settings.delete_secret("hf-token")):
        with pytest.raises(settings.NoKeyring) as info:
            call()
        assert kind_of(info.value) is FailureKind.NO_KEYRING
        message = str(info.value)
        assert "\n" not in message and "no keyring" in message and "plain text" in message
    assert files_under(pagewise_home) == [] and files_under(tmp_path) == []


def test_a_backend_with_no_priority_counts_as_none(tmp_path):
    class Useless(FileKeyring):
        priority = 0
    with keyring_backend(Useless(tmp_path / "k.json")), pytest.raises(settings.NoKeyring):
        settings.set_secret("x", "y")
    assert not (tmp_path / "k.json").exists()


# --- the command line: `pagewise settings …` in a real subprocess --------------------------------


def pagewise_settings(*args: str, home: Path, keyring_file: Path | None, stdin: str = ""):
    """A real process: keyring picks its backend (PYTHON_KEYRING_BACKEND) once per process."""
    from tests.support.cli import run_process
    if keyring_file is not None:      # the "OS keyring": a real keyring backend, outside the app's folders
        env = {"PYTHON_KEYRING_BACKEND": "tests.support.file_keyring.FileKeyring",
               "PAGEWISE_TEST_KEYRING": str(keyring_file)}
    else:                             # this machine's own: no keyring service here
        env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", "PAGEWISE_TEST_KEYRING": None}
    return run_process("settings", *args, home=home, env=env, stdin=stdin, timeout=60)


def test_cli_set_get_and_a_secret_that_is_only_in_the_keyring(tmp_path):
    home, vault = tmp_path / "home", tmp_path / "os-keyring" / "keyring.json"
    vault.parent.mkdir()
    secret = "sk-test-7f3a9c0e5b1d4a2f"
    for key, value in (("engine", "remote"), ("remote_url", "http://127.0.0.1:9/v1"),
                       ("remote_model", "team-qwen"), ("threads", "3"), ("first_token_budget_s", "6")):
        res = pagewise_settings("set", key, value, home=home, keyring_file=vault)
        assert res.returncode == 0, res.stderr
    res = pagewise_settings("set-secret", "remote_api_key", home=home, keyring_file=vault, stdin=secret + "\n")
    assert res.returncode == 0 and "stored in the OS keyring" in res.stdout, res.stderr
    assert json.loads(vault.read_text())["Pagewise"]["remote_api_key"] == secret
    res = pagewise_settings("get", "--json", home=home, keyring_file=vault)
    data = json.loads(res.stdout)
    assert data["settings"]["engine"] == "remote" and data["settings"]["threads"] == 3
    assert data["keyring"].endswith("FileKeyring") and secret not in res.stdout
    # the secret is nowhere under the app's folders: not in settings.toml, not in the log
    hits = [p for p in files_under(home) if secret.encode() in p.read_bytes()]
    assert files_under(home) and hits == []
    refused = pagewise_settings("set", "remote_api_key", secret, home=home, keyring_file=vault)
    assert refused.returncode == 1 and "set-secret" in refused.stderr


def test_cli_without_a_keyring_says_so_and_stores_nothing(tmp_path):
    home = tmp_path / "home"
    res = pagewise_settings("set-secret", "hub_token", home=home, keyring_file=None, stdin="hf_secret_123\n")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines() == ["pagewise: error: no keyring service is available on this "
                                               "system; Pagewise never stores secrets in plain text"]
    assert not any(b"hf_secret_123" in p.read_bytes() for p in files_under(tmp_path))
    res = pagewise_settings("set-secret", "my_password", home=home, keyring_file=None, stdin="x\n")
    assert res.returncode == 1 and "unknown secret" in res.stderr


def test_pdf_passwords_are_remembered_only_when_turned_on(file_keyring):
    assert settings.remember_pdf_password("doc-1", "pw") is False
    assert settings.remembered_pdf_password("doc-1") is None and not file_keyring.path.exists()
    settings.set_value("remember_pdf_passwords", "on")
    assert settings.remember_pdf_password("doc-1", "pw") is True
    assert settings.remembered_pdf_password("doc-1") == "pw"
    assert "pw" not in settings.settings_path().read_text()


def test_a_prefill_far_faster_than_known_is_not_taken_and_a_far_slower_one_replaces(tmp_path):
    """A prompt the engine had cached without saying so read 2,542 tokens in 27 ms: taken,
    it made every later budget fill the context. A far slower machine setting is believed."""
    mem = ReadingMemory(tmp_path / "memory.json")
    mem.set_prefill("m", 200.0)
    mem.record_prefill("m", 2542, 0.027)             # 94,000 tok/s: not a prefill
    assert mem.prefill_tps("m") == 200.0
    mem.record_prefill("m", 1000, 4.0)               # 250: a refinement, smoothed
    assert mem.prefill_tps("m") == 225.0
    mem.set_prefill("bad", 93868.2)                  # a wrong value kept by an earlier version
    mem.record_prefill("bad", 1000, 5.0)
    assert mem.prefill_tps("bad") == 200.0


@pytest.mark.parametrize("asked", ["1000", str(10**20)])
def test_threads_above_the_cores_are_clamped_and_said(tmp_path, asked):
    """Issue 32, point 13: `settings set threads 1000` was taken; the worker ran 1,002 threads."""
    home = tmp_path / "home"
    res = pagewise_settings("set", "threads", asked, home=home, keyring_file=None)
    cores = settings.cores()
    assert res.returncode == 0, res.stderr
    assert f"threads {asked} is more than the {cores} cores of this machine: using {cores}" in res.stderr
    shown = pagewise_settings("get", "--json", home=home, keyring_file=None)
    assert json.loads(shown.stdout)["settings"]["threads"] == (cores if int(asked) > 4096 else int(asked))


def test_prompts_are_sized_by_a_speed_that_holds_while_answers_stay_near_it(tmp_path):
    """Issues 32.18, 33.6: the budget followed every answer's speed, so the same question on
    the same document got other passages after each answer and its stored prompt never matched."""
    mem = ReadingMemory(tmp_path / "memory.json")
    mem.set_prefill("m", 188.5)
    assert mem.budget_tps("m") == 188.5
    mem.record_prefill("m", 1101, 8.688)             # 127 tok/s: smoothed to 157.6, within the band
    assert mem.prefill_tps("m") == 157.6 and mem.budget_tps("m") == 188.5
    assert ReadingMemory(tmp_path / "memory.json").budget_tps("m") == 188.5     # kept between runs
    mem.record_prefill("m", 1000, 20.0)              # 50 tok/s: out of the band, the budget follows
    assert mem.budget_tps("m") == mem.prefill_tps("m") < 150
    assert mem.budget_tps("unknown") is None
