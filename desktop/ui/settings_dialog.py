"""Provider settings: base URL, model, small model, API key. The key goes to the OS keyring only."""

from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.bridge import Settings

WELCOME_WIDTH = 680  # px: the first-run page's column


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    settings: Settings
    api_key: str  # empty: keep whatever is stored
    run_only: bool  # keep the key in memory for this run instead of the keyring


class ProviderForm(QWidget):
    """The fields shared by the Settings dialog and the first-run page."""

    submitted = Signal(object)  # ProviderChoice

    def __init__(self, settings: Settings, keyring_problem: str | None, key_source: str,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._settings = settings
        self.base_url = QLineEdit(settings.base_url, self)
        self.base_url.setObjectName("base_url")
        self.base_url.setPlaceholderText("https://api.anthropic.com (default)")
        self.model = QLineEdit(settings.model, self)
        self.model.setObjectName("model")
        self.small_model = QLineEdit(settings.small_model, self)
        self.small_model.setObjectName("small_model")
        self.small_model.setPlaceholderText(self.tr("used for summaries; empty = the chat model"))
        self.max_output = QSpinBox(self)
        self.max_output.setRange(256, 128_000)
        self.max_output.setSingleStep(1024)
        self.max_output.setValue(settings.max_output_tokens)
        self.window_override = QSpinBox(self)
        self.window_override.setObjectName("window_override")
        self.window_override.setRange(0, 10_000_000)
        self.window_override.setSingleStep(1000)
        self.window_override.setSpecialValueText(self.tr("from the model catalog"))
        self.window_override.setValue(int(settings.model_overrides.get(settings.model, {}).get("window", 0)))
        self.api_key = QLineEdit(self)
        self.api_key.setObjectName("api_key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(
            {"env": self.tr("set by ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN"),
             "keyring": self.tr("saved in the system keyring (type to replace)"),
             "session": self.tr("kept for this run only (type to replace)")}.get(key_source, "sk-ant-…")
        )
        self.keyring_note = QLabel(keyring_problem or "", self)
        self.keyring_note.setObjectName("keyring_note")
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setVisible(bool(keyring_problem))
        self.run_only = QCheckBox(self.tr("Use the key for this run only (not saved)"), self)
        self.run_only.setObjectName("run_only")
        self.run_only.setChecked(bool(keyring_problem))
        self.run_only.setEnabled(not keyring_problem)  # without a keyring, run-only is the only safe choice

        form = QFormLayout()
        form.addRow(self.tr("Base URL"), self.base_url)
        form.addRow(self.tr("Model"), self.model)
        form.addRow(self.tr("Small model"), self.small_model)
        form.addRow(self.tr("Max output tokens"), self.max_output)
        form.addRow(self.tr("Context window"), self.window_override)
        form.addRow(self.tr("API key"), self.api_key)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(self.keyring_note)
        layout.addWidget(self.run_only)

    def choice(self) -> ProviderChoice:
        overrides = {k: dict(v) for k, v in self._settings.model_overrides.items()}
        model = self.model.text().strip() or self._settings.model
        if self.window_override.value():
            overrides.setdefault(model, {})["window"] = self.window_override.value()
        else:
            overrides.get(model, {}).pop("window", None)
        settings = replace(
            self._settings,
            base_url=self.base_url.text().strip(),
            model=model,
            small_model=self.small_model.text().strip(),
            max_output_tokens=self.max_output.value(),
            model_overrides={k: v for k, v in overrides.items() if v},
        )
        return ProviderChoice(settings, self.api_key.text().strip(), self.run_only.isChecked())


class SettingsDialog(QDialog):
    def __init__(self, settings: Settings, keyring_problem: str | None, key_source: str,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Settings"))
        self.setMinimumWidth(460)
        self.form = ProviderForm(settings, keyring_problem, key_source, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        layout.addWidget(buttons)


class WelcomePage(QWidget):
    """First run: guide a new user to a working provider."""

    def __init__(self, settings: Settings, keyring_problem: str | None, key_source: str,
                 parent: QWidget | None = None):
        super().__init__(parent)
        title = QLabel(self.tr("<h2>Welcome to Précis</h2>"), self)
        intro = QLabel(
            self.tr(
                "Précis talks to Claude through the Anthropic API or any Anthropic-compatible provider.<br>"
                "1. Paste an API key (from console.anthropic.com, or your provider).<br>"
                "2. Leave the base URL empty for Anthropic, or enter your provider's URL.<br>"
                "3. Pick a model. You can change all of this later in Settings."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.form = ProviderForm(settings, keyring_problem, key_source, self)
        self.start_button = QPushButton(self.tr("Start chatting"), self)
        self.start_button.setObjectName("start_button")
        self.start_button.clicked.connect(lambda: self.form.submitted.emit(self.form.choice()))
        self.start_button.setDefault(True)
        self.form.api_key.returnPressed.connect(self.start_button.click)
        # A readable column, not fields stretched across a maximised window.
        column = QWidget(self)
        column.setObjectName("welcome_column")
        column.setMaximumWidth(WELCOME_WIDTH)
        layout = QVBoxLayout(column)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addSpacing(12)
        layout.addWidget(self.form)
        layout.addSpacing(6)
        layout.addWidget(self.start_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addStretch(1)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(48, 32, 48, 32)
        outer.addStretch(1)
        outer.addWidget(column, 100)
        outer.addStretch(1)
