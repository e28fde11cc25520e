"""The model manager and the settings dialog, offscreen: the real catalogue and planner, a real
GGUF import (a copy of the embedded model), a damaged file refused, remove; settings saved
through app.core.settings, the API key through a real keyring backend. Screenshots go to
docs/screenshots/ (model-manager.png, settings.png)."""
from __future__ import annotations

import shutil
from pathlib import Path

from app.core import settings
from app.core.models import catalogue as models
from tests.support.file_keyring import keyring_backend

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
EMBEDDED = models.local_path(models.load_catalogue(imported=False).default)


def test_the_model_manager_lists_imports_refuses_and_removes(qtbot, tmp_path):
    from app.qt.model_manager import ModelManager
    dialog = ModelManager()
    qtbot.addWidget(dialog)
    rows = {r["id"]: r for r in dialog.rows}
    assert rows["smollm2-135m-q4_1"]["installed"] and "multilingual-e5-small-q4" not in rows
    assert dialog.table.rowCount() == len(rows) and "This machine:" in dialog.summary.text()
    assert dialog.table.item(0, 5).text().startswith("fits: llama.cpp")

    bad = tmp_path / "half.gguf"
    bad.write_bytes(EMBEDDED.read_bytes()[: EMBEDDED.stat().st_size // 2])
    dialog.import_path(str(bad))
    # the job's result reaches the dialog by a queued signal, after the job itself has finished
    qtbot.waitUntil(lambda: dialog._job.finished and "Checking" not in dialog.status.text(), timeout=30_000)
    assert "past the end of the file" in dialog.status.text() and "\n" not in dialog.status.text()

    copy = tmp_path / "smollm2-copy.gguf"
    shutil.copyfile(EMBEDDED, copy)
    dialog.import_path(str(copy))
    qtbot.waitUntil(lambda: dialog._job.finished and "imported" in dialog.status.text(), timeout=60_000)
    assert {r["id"]: r for r in dialog.rows}["smollm2-copy"]["installed"]
    assert dialog.selected()["id"] == "smollm2-copy" and dialog.btn_remove.isEnabled()
    dialog.show()
    dialog.grab().save(str(SHOTS / "model-manager.png"))
    dialog.remove()
    assert "smollm2-copy" not in {r["id"] for r in dialog.rows} and dialog.status.text().startswith("removed")


def test_the_settings_dialog_saves_settings_and_the_key_in_the_keyring(qtbot, file_keyring, pagewise_home):
    from app.qt.settings_dialog import SettingsDialog
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    dialog.engine.setCurrentIndex(3)                     # remote
    dialog.save()
    assert "needs its URL and model" in dialog.error.text() and settings.load().engine == "auto"
    dialog.remote_url.setText("http://llm.team.lan:8000/v1")
    dialog.remote_model.setText("Qwen/Qwen2.5-14B-Instruct-AWQ")
    dialog.threads.setValue(4)
    dialog.budget.setValue(6.0)
    dialog.rerank.setCurrentIndex(1)                     # the model picks the best page
    dialog.api_key.setText("sk-dialog-secret-42")
    dialog.show()
    dialog.grab().save(str(SHOTS / "settings.png"))
    assert dialog.save()
    s = settings.load()
    assert (s.engine, s.threads, s.first_token_budget_s, s.remote_model, s.rerank) == \
        ("remote", 4, 6.0, "Qwen/Qwen2.5-14B-Instruct-AWQ", "on")
    assert settings.get_secret("remote_api_key") == "sk-dialog-secret-42"
    assert not any(b"sk-dialog-secret-42" in p.read_bytes() for p in pagewise_home.rglob("*") if p.is_file())


def test_without_a_keyring_the_dialog_says_so(qtbot):
    import keyring.backends.fail

    from app.qt.settings_dialog import SettingsDialog
    with keyring_backend(keyring.backends.fail.Keyring()):
        dialog = SettingsDialog()
        qtbot.addWidget(dialog)
        assert not dialog.api_key.isEnabled() and "no keyring service" in dialog.keyring_note.text().lower()
