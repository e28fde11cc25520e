"""The settings dialog: engine, CPU threads, the longest text read at once (context cap), how soon
the first words should come (first-token budget), theme and interface language (applied at once), remembered
PDF passwords, and the remote endpoint (URL, model, API key). Values go through
app.core.settings (validated, settings.toml); the API key only to the OS keyring."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
)

from app.core import settings
from app.qt import interface_language
from app.failure_messages import describe

ENGINE_LABELS = {"auto": "Automatic (the planner chooses)", "llamacpp": "llama.cpp", "vllm": "vLLM",
                 "remote": "Remote endpoint (a team's server)"}
# issue 19: the model reads retrieval's best pages and picks the one that answers, when that
# fits the first-token budget; off by default: the models measured chose worse than the search
RERANK_LABELS = {"off": "No (the search's order)", "on": "Yes, when there is time before the first words"}
JUDGE_LABELS = {"auto": "When there is time before the first words", "on": "Always (slow on a processor)",
                "off": "No (the search's cards)"}
REWRITE_LABELS = {"auto": "When there is time before the first words", "on": "Always (slow on a processor)",
                  "off": "No (the question's own words)"}


class SettingsDialog(QDialog):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.resize(560, 0)
        s = settings.load()
        self.engine = QComboBox()
        for key, label in ENGINE_LABELS.items():
            self.engine.addItem(label, key)
        self.engine.setCurrentIndex(list(ENGINE_LABELS).index(s.engine))
        self.threads = QSpinBox(minimum=0, maximum=256, value=s.threads, specialValueText="automatic")
        self.context_cap = QSpinBox(minimum=0, maximum=1 << 20, singleStep=1024, value=s.context_cap,
                                    specialValueText="as much as the machine allows",
                                    suffix=" words (tokens)")
        self.context_cap.setToolTip("Larger reads more of a long document at once, but the first "
                                    "answer comes later and takes more memory.")
        self.budget = QDoubleSpinBox(minimum=0.0, maximum=600.0, singleStep=0.5, decimals=1, suffix=" s",
                                     value=s.first_token_budget_s or 0.0,
                                     specialValueText="automatic (10 s on a CPU, 3 s with a GPU)")
        self.budget.setToolTip("Pagewise reads fewer passages when needed so the answer starts "
                               "within this time.")
        self.theme = QComboBox()
        for key in settings.THEMES:
            self.theme.addItem({"auto": "Follow the system"}.get(key, key.capitalize()), key)
        self.theme.setCurrentIndex(settings.THEMES.index(s.theme))
        self.language = QComboBox()
        for key, label in interface_language.LABELS.items():
            self.language.addItem(label, key)
        self.language.setCurrentIndex(settings.LANGUAGES.index(s.interface_language))
        self.remember = QCheckBox("Remember PDF passwords (in the OS keyring)", checked=s.remember_pdf_passwords)
        self.rerank = QComboBox()
        for key, label in RERANK_LABELS.items():
            self.rerank.addItem(label, key)
        self.rerank.setCurrentIndex(list(RERANK_LABELS).index(s.rerank))
        self.judge = QComboBox()
        for key, label in JUDGE_LABELS.items():
            self.judge.addItem(label, key)
        self.judge.setCurrentIndex(list(JUDGE_LABELS).index(s.judge_cards))
        self.rewrite = QComboBox()
        for key, label in REWRITE_LABELS.items():
            self.rewrite.addItem(label, key)
        self.rewrite.setCurrentIndex(list(REWRITE_LABELS).index(s.rewrite_question))

        form = QFormLayout()
        form.addRow("Engine", self.engine)
        form.addRow("Processor cores to use", self.threads)
        form.addRow("Longest text the model reads at once", self.context_cap)
        form.addRow("Aim for the first words within", self.budget)
        form.addRow("Model picks the best page", self.rerank)
        form.addRow("Model judges the evidence", self.judge)
        form.addRow("Model words the question as the document would", self.rewrite)
        form.addRow("Theme", self.theme)
        form.addRow("Interface language", self.language)
        form.addRow("", self.remember)

        self.remote_url = QLineEdit(s.remote_url, placeholderText="http://llm.team.lan:8000/v1")
        self.remote_model = QLineEdit(s.remote_model, placeholderText="Qwen/Qwen2.5-14B-Instruct-AWQ")
        self.api_key = QLineEdit(echoMode=QLineEdit.EchoMode.Password,
                                 placeholderText="unchanged (kept in the OS keyring)")
        remote = QGroupBox("Remote endpoint (OpenAI-compatible)")
        rform = QFormLayout(remote)
        rform.addRow("URL", self.remote_url)
        rform.addRow("Model", self.remote_model)
        rform.addRow("API key", self.api_key)
        try:
            where = f"Secrets are kept in {settings.keyring_name().rsplit('.', 1)[-1]}."
        except settings.NoKeyring as exc:
            where = str(exc)[:1].upper() + str(exc)[1:] + "."
            self.api_key.setEnabled(False)
            self.remember.setEnabled(False)
        self.keyring_note = QLabel(where, wordWrap=True)
        rform.addRow("", self.keyring_note)

        self.error = QLabel(wordWrap=True, styleSheet="color: #c0392b")
        for field in (self.remote_url, self.remote_model):      # the message is about the old value
            field.textChanged.connect(lambda _text: self.error.clear())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(remote)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def values(self) -> dict[str, str]:
        budget = self.budget.value()
        return {"engine": self.engine.currentData(), "threads": str(self.threads.value()),
                "context_cap": str(self.context_cap.value()),
                "first_token_budget_s": "auto" if budget == 0 else str(budget),
                "theme": self.theme.currentData(), "interface_language": self.language.currentData(),
                "remember_pdf_passwords": "on" if self.remember.isChecked() else "off",
                "rerank": self.rerank.currentData(), "judge_cards": self.judge.currentData(),
                "rewrite_question": self.rewrite.currentData(),
                "remote_url": self.remote_url.text(), "remote_model": self.remote_model.text()}

    def save(self) -> bool:
        """Validate and save every value (one line on the first bad one); the key to the keyring."""
        try:
            if self.values()["engine"] == "remote" and not (self.remote_url.text() and self.remote_model.text()):
                raise settings.BadInput("a remote engine needs its URL and model name")
            for key, text in self.values().items():
                settings.set_value(key, text)
            if self.api_key.text():
                settings.set_secret("remote_api_key", self.api_key.text())
                self.api_key.clear()
            from app.qt import theme
            theme.refresh()         # a new theme shows at once, not after a restart
            interface_language.apply()     # and a new language
        except Exception as exc:  # noqa: BLE001 - shown in the dialog as one line
            self.error.setText(describe(exc))
            return False
        self.accept()
        return True
