"""Provider settings as profiles (presets for known providers): base URL, auth, models, overrides, key, and
Test connection. The key goes to the OS keyring only, one per profile."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial

from msgspec import Struct, field, structs
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import (
    ANTHROPIC,
    AUTH_KINDS,
    AUTH_WORDS,
    CUSTOM,
    PRESETS,
    Draft,
    Profile,
    ProfileEdits,
    Settings,
    preset,
)
from desktop.ui.api import profile_list as P
from desktop.ui.look.plural import numerus
from desktop.ui.look.theme import BAD, GOOD, is_dark
from desktop.ui.look.wording import word
from desktop.ui.settings.language_box import LanguageBox
from desktop.ui.settings.threshold_settings import ThresholdFields
from desktop.ui.settings.wheel_guard import guard_wheel

WELCOME_WIDTH = 680  # px: the first-run page's column


class ProviderChoice(Struct, frozen=True):
    settings: Settings
    api_key: str  # empty: keep whatever is stored
    run_only: bool  # keep the key in memory for this run instead of the keyring
    profile: Profile | None = None  # the profile the key belongs to (None: the settings' own)
    in_file: bool = False  # keep the key in a private file in the config folder (where no keyring works)
    edits: ProfileEdits = field(default_factory=ProfileEdits)  # renames, copied keys, deletions (Settings)
    other_keys: tuple[tuple[Profile, str], ...] = ()  # keys typed for other profiles than ``profile``


# (the date the prices in use were checked, the prices.json that updates them, what was wrong with it)
PricesNote = tuple[str, str, tuple[str, ...]]

ENV_NAMES = {
    "base_url": "ANTHROPIC_BASE_URL",
    "model": "ANTHROPIC_MODEL",
    "small_model": "ANTHROPIC_SMALL_FAST_MODEL",
}


def current_profile(settings: Settings) -> Profile:
    """The profile the settings use; settings from before profiles existed become one (values without the
    environment's overrides)."""
    saved = next((p for p in settings.profiles if p.name == settings.profile), None)
    if saved is not None:
        return structs.replace(saved, model_overrides={k: dict(v) for k, v in saved.model_overrides.items()})
    found = preset(settings.profile) if settings.profile else None
    if found is not None:
        return found

    def own(name: str) -> str:
        return str(settings.env_overrides.get(name, getattr(settings, name)))

    model = own("model")
    over = settings.model_overrides.get(model)
    return Profile(
        "Custom" if own("base_url") else ANTHROPIC,
        own("base_url"),
        "x-api-key",
        model,
        own("small_model"),
        {model: dict(over)} if over else {},
        settings.long_cache_ttl,
    )


class ProviderForm(QWidget):
    """The fields shared by the Settings dialog (the profiles dialog) and the first-run page."""

    submitted = Signal(object)  # ProviderChoice
    test_requested = Signal(object, str)  # Profile, the key typed (empty: the stored one)

    def __init__(
        self,
        settings: Settings,
        keyring_problem: str | None,
        key_source: str,
        parent: QWidget | None = None,
        *,
        price_note: PricesNote | None = None,
        manage: bool = False,
        chats: Mapping[str, int] | None = None,
    ):
        """``manage``: Settings' list of the user's own profiles with Add, Duplicate and Delete (the first-run
        page instead offers the presets to pick from); ``chats``: how many chats name each profile."""
        super().__init__(parent)
        self._settings = settings
        self._manage = manage
        self._chats = dict(chats or {})
        self._profiles = {p.name: p for p in settings.profiles}
        self._drafts: list[Draft] = P.drafts(settings.profiles, current_profile(settings))
        self._index = 0  # the draft the fields show (manage mode)
        self._typed_keys: dict[int, str] = {}  # id(draft) -> a key typed for it before another was picked
        self.profile_box = QComboBox(self)
        self.profile_box.setObjectName("profile_box")
        self.profile_box.setAccessibleName(self.tr("Provider profile"))
        self.profile_name = QLineEdit(self)
        self.profile_name.setObjectName("profile_name")
        self.base_url = QLineEdit(self)
        self.base_url.setObjectName("base_url")
        self.base_url.setPlaceholderText(self.tr("https://api.anthropic.com (default)"))
        self.auth = QComboBox(self)
        self.auth.setObjectName("auth_kind")
        for kind in AUTH_KINDS:
            self.auth.addItem(word(AUTH_WORDS[kind]), kind)
        self.model = QLineEdit(self)
        self.model.setObjectName("model")
        self.small_model = QLineEdit(self)
        self.small_model.setObjectName("small_model")
        self.small_model.setPlaceholderText(self.tr("used for summaries; empty = the chat model"))
        self.max_output = QSpinBox(self)
        self.max_output.setRange(256, 128_000)
        self.max_output.setSingleStep(1024)
        self.max_output.setValue(settings.max_output_tokens)
        self.thinking_budget = QSpinBox(self)
        self.thinking_budget.setObjectName("thinking_budget")
        self.thinking_budget.setRange(1_024, 128_000)
        self.thinking_budget.setSingleStep(1024)
        self.thinking_budget.setValue(settings.thinking_budget_tokens)
        self.thinking_budget.setToolTip(
            self.tr("Tokens a chat with Thinking on lets the model think (kept below the max output tokens)")
        )
        self.window_override = QSpinBox(self)
        self.window_override.setObjectName("window_override")
        self.window_override.setRange(0, 10_000_000)
        self.window_override.setSingleStep(1000)
        self.window_override.setSpecialValueText(self.tr("from the provider or the catalog"))
        self.input_price = QDoubleSpinBox(self)
        self.output_price = QDoubleSpinBox(self)
        for box, name in ((self.input_price, "input_price"), (self.output_price, "output_price")):
            box.setObjectName(name)
            box.setRange(0, 1000)
            box.setDecimals(2)
            box.setPrefix("$")
            box.setSuffix(self.tr(" / M tokens"))
            box.setSpecialValueText(self.tr("from the catalog"))
        self.long_ttl = QCheckBox(
            self.tr("Keep the prompt cache for an hour (turn off if the provider rejects it)"), self
        )
        self.long_ttl.setObjectName("long_cache_ttl")
        self.long_ttl.setToolTip(
            self.tr(
                "A chat's requests use the hour-long cache once it has paused between 5 minutes and an hour (the "
                "cheaper 5-minute cache lapses in such a pause); until then they use the 5-minute one. A change "
                "applies from the next request; the hover card's cache row shows which one the last request bought."
            )
        )
        self.price_tiers = QCheckBox(self.tr("Let a request cross a model's price cliff"), self)
        # The whole rule as a tooltip: the sentence is wider than the form.
        self.price_tiers.setToolTip(
            self.tr(
                "Let a request cross a model's price cliff (e.g. claude-haiku-5-5 above "
                "100K tokens costs 5x); off, the chat compacts before it"
            )
        )
        self.price_tiers.setObjectName("allow_price_tiers")
        self.price_tiers.setChecked(settings.allow_price_tiers)
        self.prices_note = QLabel(self)
        self.prices_note.setObjectName("prices_note")
        self.prices_note.setWordWrap(True)
        self.prices_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if price_note is not None:
            date, path, problems = price_note
            self.prices_note.setText(
                self.tr("Prices as of %1; edit %2 to update them.").replace("%1", date).replace("%2", path)
                + "".join("\n" + word(p) for p in problems)
            )
        self.prices_note.setVisible(price_note is not None)
        self.threshold = ThresholdFields(settings.auto_compact_ratio, self)
        self.api_key = QLineEdit(self)
        self.api_key.setObjectName("api_key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.keyring_note = QLabel(self)
        self.keyring_note.setObjectName("keyring_note")
        self.keyring_note.setWordWrap(True)
        self.run_only = QCheckBox(self.tr("Use the key for this run only (not saved)"), self)
        self.run_only.setObjectName("run_only")
        self.in_file = QCheckBox(self.tr("Keep the key in a private file (readable by you only)"), self)
        self.in_file.setToolTip(
            self.tr("A file in the config folder that only your user can read: this system has no keyring")
        )
        self.in_file.setObjectName("key_in_file")
        self.in_file.toggled.connect(lambda on: self.run_only.setChecked(not on))
        self.in_file_note = QLabel(
            self.tr(
                "This system has no keyring, so the key is kept in a file in the config folder that only your "
                "user can read (mode 0600). Untick it to use the key for this run only: it is then not saved."
            ),
            self,
        )
        self.in_file_note.setObjectName("key_in_file_note")
        self.in_file_note.setWordWrap(True)
        self._key_source = key_source
        self._in_use: int | None = None  # id() of the draft of the profile in use (whose key key_source is)
        self.set_key_facts(keyring_problem, key_source)
        self.test_button = QPushButton(self.tr("Test connection"), self)
        self.test_button.setObjectName("test_connection")
        self.test_button.setToolTip(
            self.tr("Send one tiny request and report the models, the window and the key")
        )
        self.test_result = QLabel(self)
        self.test_result.setObjectName("test_result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.hide()
        self.language = LanguageBox(settings.language, self)
        self.env_note = QLabel(self)
        self.env_note.setObjectName("env_note")
        self.env_note.setWordWrap(True)
        self.env_note.hide()

        self.add_button = QToolButton(self)
        self.add_button.setObjectName("add_profile")
        self.add_button.setText(self.tr("Add"))
        self.add_button.setToolTip(
            self.tr(
                "A new profile from a provider's preset, or Custom for any other "
                "Anthropic-compatible endpoint"
            )
        )
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        add_menu = QMenu(self.add_button)
        for name in [p.name for p in PRESETS] + [CUSTOM]:
            label = self.tr("Custom (any Anthropic-compatible endpoint)") if name == CUSTOM else name
            action = add_menu.addAction(label)
            action.setObjectName(f"add:{name}")
            action.triggered.connect(partial(self.add_profile, name))
        self.add_button.setMenu(add_menu)
        self.duplicate_button = QToolButton(self)
        self.duplicate_button.setObjectName("duplicate_profile")
        self.duplicate_button.setText(self.tr("Duplicate"))
        self.duplicate_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.duplicate_button.setToolTip(
            self.tr("A copy of this profile without its key (the menu copies the key too)")
        )
        duplicate_menu = QMenu(self.duplicate_button)
        duplicate_menu.addAction(self.tr("Duplicate without the key"), lambda: self.duplicate_profile(False))
        duplicate_menu.addAction(self.tr("Duplicate with the key"), lambda: self.duplicate_profile(True))
        self.duplicate_button.setMenu(duplicate_menu)
        self.duplicate_button.clicked.connect(lambda: self.duplicate_profile(False))
        self.delete_button = QPushButton(self.tr("Delete…"), self)
        self.delete_button.setObjectName("delete_profile")
        self.delete_button.clicked.connect(self.ask_delete)
        self.delete_box: QMessageBox | None = None  # the open confirmation
        self.profile_problem = QLabel(self)
        self.profile_problem.setObjectName("profile_problem")
        self.profile_problem.setWordWrap(True)
        self.profile_problem.hide()
        profile_row = QHBoxLayout()
        profile_row.addWidget(self.profile_box, 1)
        for button in (self.add_button, self.duplicate_button, self.delete_button):
            profile_row.addWidget(button)
            button.setVisible(manage)

        self._test_row = test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        prices = QHBoxLayout()
        prices.addWidget(self.input_price)
        prices.addWidget(self.output_price)
        # Sections with headings, their field labels in one column. Wrapped notes sit between the sections'
        # forms, not in a form row: a form row keeps the height a note wants at its narrowest.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self._labels: list[QLabel] = []
        self._indent = 0
        self._test_ok: bool | None = None  # whether the last Test connection passed (None: none yet)
        self._section(layout, self.tr("Provider"), [(self.tr("Profile"), profile_row)], first=True)
        layout.addWidget(self.profile_problem)
        self._section(
            layout, None, [(self.tr("Name"), self.profile_name), (self.tr("Base URL"), self.base_url)]
        )
        layout.addWidget(self.env_note)
        self._section(
            layout, None, [(self.tr("Authentication"), self.auth), (self.tr("API key"), self.api_key)]
        )
        for widget in (self.keyring_note, self.run_only, self.in_file, self.in_file_note):
            layout.addWidget(widget)
        layout.addLayout(test_row)
        layout.addWidget(self.test_result)
        self._section(
            layout,
            self.tr("Model"),
            [
                (self.tr("Model"), self.model),
                (self.tr("Small model"), self.small_model),
                (self.tr("Max output tokens"), self.max_output),
                (self.tr("Thinking budget"), self.thinking_budget),
                (self.tr("Context window"), self.window_override),
                (self.tr("Prices (in, out)"), prices),
            ],
        )
        layout.addWidget(self.prices_note)
        layout.addWidget(self.price_tiers)
        self._section(
            layout,
            self.tr("Context and cost"),
            [(self.tr("Compact at"), self.threshold), ("", self.long_ttl)],
        )
        self.appearance = self._section(layout, self.tr("Appearance"), [(self.tr("Language"), self.language)])
        self.align_labels()

        current = current_profile(settings)
        if manage:  # the user's own profiles only: a preset becomes one through Add, never by being picked
            self.profile_box.addItems([d.profile.name for d in self._drafts])
            self._index = next((i for i, d in enumerate(self._drafts) if d.profile.name == current.name), 0)
            self.profile_box.setCurrentIndex(self._index)
            self._in_use = id(self._drafts[self._index])
            self.profile_box.currentIndexChanged.connect(self._switch)
            self.profile_name.textEdited.connect(self._renamed)
            current = self._drafts[self._index].profile
        else:
            names = [
                current.name,
                *[n for n in self._profiles if n != current.name],
                *[
                    p.name
                    for p in (*PRESETS, preset(CUSTOM))
                    if p is not None and p.name != current.name and p.name not in self._profiles
                ],
            ]
            self._profiles.setdefault(current.name, current)
            self.profile_box.addItems(names)
            self.profile_box.currentTextChanged.connect(self._pick)
        self.test_button.clicked.connect(
            lambda: self.test_requested.emit(self.profile(), self.api_key.text().strip())
        )
        self._show(current)
        self._mark_env()
        self._buttons_state()

    def _section(
        self,
        layout: QVBoxLayout,
        title: str | None,
        rows: list[tuple[str, QWidget | QHBoxLayout]],
        *,
        first: bool = False,
    ) -> QFormLayout:
        """A titled group of fields (``title`` None: more fields of the group above)."""
        if title is not None:
            heading = QLabel(title, self)
            heading.setObjectName("section_heading")
            font = heading.font()
            font.setBold(True)
            heading.setFont(font)
            if not first:
                layout.addSpacing(12)
            layout.addWidget(heading)
        form = QFormLayout()
        for text, widget in rows:
            self.add_row(form, text, widget)
        layout.addLayout(form)
        return form

    def add_row(self, form: QFormLayout, text: str, field: QWidget | QHBoxLayout) -> None:
        """A field and its label, the label in the column every section shares (see align_labels)."""
        label = QLabel(text, self)
        self._labels.append(label)
        form.addRow(label, field)

    def align_labels(self) -> None:
        """One label column for every section, as wide as its widest label; the notes and choices between the
        sections start where the fields do."""
        width = max(label.sizeHint().width() for label in self._labels)
        for label in self._labels:
            label.setMinimumWidth(width)
        indent = width + max(0, self.appearance.horizontalSpacing())  # where every section's fields start
        # A margin of the widget's own style sheet: the window's theme styles labels, which overrides margins set
        # in code.
        self._indent = indent
        for widget in (
            self.env_note,
            self.keyring_note,
            self.prices_note,
            self.run_only,
            self.in_file,
            self.in_file_note,
            self.price_tiers,
        ):
            widget.setStyleSheet(self._note_style())
        self.profile_problem.setStyleSheet(self._note_style(self._colour(False)))
        self.test_result.setStyleSheet(self._note_style(self._colour(self._test_ok)))
        self._test_row.setContentsMargins(indent, 0, 0, 0)

    def _colour(self, good: bool | None) -> str | None:
        """A test that passed, or a problem, in the colour that reads on this theme's page (None: neither)."""
        return None if good is None else (GOOD if good else BAD)[is_dark(self.palette())]

    def _note_style(self, colour: str | None = None) -> str:
        return f"margin-left: {self._indent}px;" + (f" color: {colour};" if colour else "")

    # --- profiles ---------------------------------------------------------------------------------------
    def _keep_fields(self) -> None:
        """What the fields show goes back into the draft they show (before another is picked or saved)."""
        draft = self._drafts[self._index]
        draft.profile = self.profile()
        typed = self.api_key.text().strip()
        if typed:
            self._typed_keys[id(draft)] = typed
        else:
            self._typed_keys.pop(id(draft), None)

    def _switch(self, index: int) -> None:
        if index < 0 or index >= len(self._drafts) or index == self._index:
            return
        self._keep_fields()
        self._index = index
        draft = self._drafts[index]
        self._show(draft.profile)
        self._mark_env()
        self.api_key.setText(self._typed_keys.get(id(draft), ""))
        self.test_result.hide()
        self._check_names()

    def _renamed(self, text: str) -> None:
        self.profile_box.setItemText(self._index, text.strip())
        self._drafts[self._index].profile.name = text.strip()
        self._check_names()

    def _check_names(self) -> str | None:
        problem = P.name_problem(self._drafts)
        self.profile_problem.setText(word(problem) if problem else "")
        self.profile_problem.setVisible(bool(problem))
        return problem

    def _buttons_state(self) -> None:
        self.delete_button.setEnabled(P.removal_problem(self._drafts) is None)
        self.delete_button.setToolTip(
            word(P.removal_problem(self._drafts) or "") or self.tr("Delete this profile and its saved key")
        )

    def _append(self, draft: Draft, at: int) -> None:
        self.profile_box.blockSignals(True)
        self.profile_box.insertItem(at, draft.profile.name)
        self.profile_box.blockSignals(False)
        self.profile_box.setCurrentIndex(at)  # shows it (_switch)
        self._buttons_state()
        self.profile_name.setFocus()
        self.profile_name.selectAll()

    def add_profile(self, preset_name: str) -> None:
        """Add: a new profile from a preset (or Custom), shown in the list and selected; saved with Save."""
        self._keep_fields()
        draft = P.added(self._drafts, preset_name)
        self._append(draft, len(self._drafts) - 1)

    def duplicate_profile(self, with_key: bool) -> None:
        self._keep_fields()
        draft = P.duplicated(self._drafts, self._index, with_key)
        self._append(draft, self._index + 1)

    def ask_delete(self) -> QMessageBox | None:
        """Delete asks first, saying what happens to the key and to the chats that use the profile."""
        if P.removal_problem(self._drafts) is not None:
            return None
        self._keep_fields()
        draft = self._drafts[self._index]
        name = draft.profile.name
        others = [d.profile.name for i, d in enumerate(self._drafts) if i != self._index]
        successor = others[P.successor(self._drafts, self._index, self._settings.profile)]
        chats = self._chats.get(draft.origin or "", 0)
        text = self.tr("Delete the profile “%1”? Its saved key is removed from this computer.").replace(
            "%1", name
        )
        if chats:
            text += "\n\n" + numerus(
                self.tr(
                    "This profile is used by %n chat(s): they keep their messages and "
                    "continue on “%1” (the profile in use when you save) with its model.",
                    "",
                    chats,
                ),
                chats,
            ).replace("%1", successor)
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Delete profile"),
            text,
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("delete_profile_box")
        delete = box.addButton(self.tr("Delete"), QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(lambda b: self.delete_current() if b is delete else None)
        self.delete_box = box
        box.open()
        return box

    def delete_current(self) -> None:
        """Remove the shown profile from the list (Save makes it so: Cancel keeps it)."""
        if P.removal_problem(self._drafts) is not None:
            return
        at = self._index
        after = P.successor(self._drafts, at, self._settings.profile)
        draft = self._drafts.pop(at)
        self._typed_keys.pop(id(draft), None)
        self._index = after
        self.profile_box.blockSignals(True)
        self.profile_box.removeItem(at)
        self.profile_box.setCurrentIndex(self._index)
        self.profile_box.blockSignals(False)
        self._show(self._drafts[self._index].profile)
        self._mark_env()
        self.api_key.setText(self._typed_keys.get(id(self._drafts[self._index]), ""))
        self._buttons_state()
        self._check_names()

    def problem(self) -> str | None:
        """Why the form cannot be saved as it is (names empty or the same twice), in one sentence."""
        if not self._manage:
            return None
        self._keep_fields()
        return self._check_names()

    def _pick(self, name: str) -> None:
        profile = self._profiles.get(name) or preset(name)
        if profile is not None:
            self._show(profile)
            self.test_result.hide()

    def _show(self, profile: Profile) -> None:
        self.profile_name.setText(profile.name)
        self.base_url.setText(profile.base_url)
        self.auth.setCurrentIndex(max(0, self.auth.findData(profile.auth)))
        self.model.setText(profile.model)
        self.small_model.setText(profile.small_model)
        over = profile.model_overrides.get(profile.model, {})
        self.window_override.setValue(int(over.get("window", 0)))
        self.input_price.setValue(float(over.get("input_price", 0.0)))
        self.output_price.setValue(float(over.get("output_price", 0.0)))
        self.threshold.show_override(over)
        self.long_ttl.setChecked(profile.long_cache_ttl)
        self._show_key_placeholder()

    def _mark_env(self) -> None:
        """Fields an environment variable overrides show its value, read-only: it is not saved."""
        names = []
        for name, var in ENV_NAMES.items():
            if name in self._settings.env_overrides:
                field_edit: QLineEdit = getattr(self, name)
                field_edit.setText(str(getattr(self._settings, name)))
                field_edit.setEnabled(False)
                field_edit.setToolTip(self.tr("Set by %s for this run; not saved") % var)
                names.append(var)
        if names:
            self.env_note.setText(
                (
                    self.tr("%s overrides this profile for this run only; it is never saved.")
                    if len(names) == 1
                    else self.tr("%s override this profile for this run only; they are never saved.")
                )
                % ", ".join(names)
            )
            self.env_note.show()

    def profile(self) -> Profile:
        """The profile as the fields describe it (an environment override keeps the profile's own value)."""
        if self._manage:
            name = self.profile_name.text().strip()
            base = self._drafts[self._index].profile
        else:
            name = self.profile_name.text().strip() or self.profile_box.currentText() or CUSTOM
            base = self._profiles.get(self.profile_box.currentText()) or Profile(name)

        def value(field_name: str) -> str:
            edit: QLineEdit = getattr(self, field_name)
            return str(getattr(base, field_name)) if not edit.isEnabled() else edit.text().strip()

        model = value("model") or self._settings.model
        overrides = {k: dict(v) for k, v in base.model_overrides.items()}
        over = overrides.setdefault(model, {})
        for key, number in (
            ("window", self.window_override.value()),
            ("input_price", self.input_price.value()),
            ("output_price", self.output_price.value()),
        ):
            if number:
                over[key] = number
            else:
                over.pop(key, None)
        self.threshold.apply(over)
        return Profile(
            name,
            value("base_url"),
            self.auth.currentData(),
            model,
            value("small_model"),
            {k: v for k, v in overrides.items() if v},
            self.long_ttl.isChecked(),
        )

    def show_test_result(self, ok: bool, text: str, models: list[str] | tuple[str, ...] = ()) -> None:
        """Test connection's answer; the models the server listed fill an empty Model field with the first."""
        if models and self.model.isEnabled() and not self.model.text().strip():
            self.model.setText(models[0])
            self.model.setCursorPosition(0)
        self.test_result.setText(text)
        self._test_ok = ok
        self.test_result.setStyleSheet(self._note_style(self._colour(ok)))
        self.test_result.show()

    def set_key_facts(self, keyring_problem: str | None, key_source: str) -> None:
        """Whether the keyring works (else why not) and where the key in use is kept: the key field's hint, the
        note, and the choices of where to keep a typed key."""
        self._key_source = key_source
        self._show_key_placeholder()
        self.keyring_note.setText(word(keyring_problem) if keyring_problem else "")
        self.keyring_note.setVisible(bool(keyring_problem))
        # Without a keyring, the private file is what is offered (its note says what it is and how to keep the key
        # for this run only instead); a key the user chose to keep for this run only stays so.
        self.in_file.setVisible(bool(keyring_problem))
        self.in_file_note.setVisible(bool(keyring_problem))
        self.in_file.setChecked(bool(keyring_problem) and key_source != "session")
        self.run_only.setChecked(bool(keyring_problem) and not self.in_file.isChecked())
        self.run_only.setEnabled(not keyring_problem)

    def _key_source_shown(self) -> str:
        """Where the shown profile's key is kept, as far as the form knows: ``key_source`` is the key of the
        profile in use; a profile added in this edit has none (or the one it copies)."""
        if not self._manage:
            return self._key_source
        draft = self._drafts[self._index]
        if id(draft) == self._in_use:
            return self._key_source
        if draft.origin is None:
            return "copied" if draft.key_from else "none"
        return "other"  # a saved profile not in use: its key was not looked for

    def _show_key_placeholder(self) -> None:
        draft = self._drafts[self._index] if self._manage and self._drafts else None
        self.api_key.setPlaceholderText(
            {
                "env": self.tr("set by ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN"),
                "keyring": self.tr("saved in the system keyring (type to replace)"),
                "session": self.tr("kept for this run only (type to replace)"),
                "file": self.tr("saved in a private file (type to replace)"),
                "copied": self.tr("the key of “{name}” is copied when you save (type to replace)").format(
                    name=draft.key_from if draft is not None else ""
                ),
                "other": self.tr("empty: this profile keeps its saved key, if it has one"),
            }.get(self._key_source_shown(), "sk-ant-…")
        )

    def choice(self) -> ProviderChoice:
        edits = ProfileEdits()
        other_keys: tuple[tuple[Profile, str], ...] = ()
        if self._manage:  # the list as shown, the shown profile in use
            self._keep_fields()
            profile = self._drafts[self._index].profile
            listed = [d.profile for d in self._drafts]
            edits = P.edits(self._settings.profiles, self._drafts)
            other_keys = tuple(
                (d.profile, self._typed_keys[id(d)])
                for i, d in enumerate(self._drafts)
                if i != self._index and id(d) in self._typed_keys
            )
        else:
            profile = self.profile()
            listed = [
                *(
                    p
                    for p in self._settings.profiles
                    if p.name not in (profile.name, self.profile_box.currentText())
                ),
                profile,
            ]
        plain = replace(
            self._settings,
            max_output_tokens=self.max_output.value(),
            thinking_budget_tokens=self.thinking_budget.value(),
            profiles=listed,
            language=self.language.value(),
            allow_price_tiers=self.price_tiers.isChecked(),
        )
        plain.env_overrides = {}
        settings = plain.with_profile(profile).with_env(
            {
                var: str(getattr(self._settings, name))
                for name, var in ENV_NAMES.items()
                if name in self._settings.env_overrides
            }
        )
        in_file = self.in_file.isVisibleTo(self) and self.in_file.isChecked()
        return ProviderChoice(
            settings,
            self.api_key.text().strip(),
            self.run_only.isChecked() and not in_file,
            profile,
            in_file,
            edits,
            other_keys,
        )


class SettingsDialog(QDialog):
    def __init__(
        self,
        settings: Settings,
        keyring_problem: str | None,
        key_source: str,
        parent: QWidget | None = None,
        *,
        prices: PricesNote | None = None,
        chats: Mapping[str, int] | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Settings · Provider profiles"))
        self.setMinimumWidth(640)
        self.form = ProviderForm(
            settings, keyring_problem, key_source, self, price_note=prices, manage=True, chats=chats
        )
        from desktop.ui.settings.instructions_dialog import DefaultInstructions

        self.instructions = DefaultInstructions(settings.instructions, self)

        # Appearance: a window preference (kept with the window's state, not in settings.json).
        self.theme_box = QComboBox(self)
        self.theme_box.setObjectName("theme_box")
        for choice, label in (
            ("system", self.tr("Same as the system")),
            ("light", self.tr("Light")),
            ("dark", self.tr("Dark")),
        ):
            self.theme_box.addItem(label, choice)
        self.form.add_row(self.form.appearance, self.tr("Theme"), self.theme_box)
        self.form.align_labels()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        # The fields scroll and Save stays in view: the form is taller than a laptop's screen, where the dialog
        # was cut at the bottom and its wrapped notes squeezed to a line.
        content = QWidget(self)
        fields = QVBoxLayout(content)
        fields.setContentsMargins(12, 12, 12, 12)
        fields.addWidget(self.form)
        fields.addSpacing(12)
        fields.addWidget(self.instructions)
        fields.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setObjectName("settings_scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 12)
        layout.addWidget(scroll, 1)
        buttons.setContentsMargins(12, 0, 12, 0)
        layout.addWidget(buttons)
        self._fit_screen(content)
        guard_wheel(content)  # the wheel scrolls the fields, never changes a number it passes over

    def _fit_screen(self, content: QWidget) -> None:
        """As tall as the fields, within most of the screen's free height, and as wide as they need (the style
        sheet's 14 px type makes them wider than at the desktop's 12 px), within the screen's width."""
        self.ensurePolished()  # the style sheet's fonts, which the fields' sizes depend on
        screen = (self.parentWidget() or self).screen()
        room = int(screen.availableGeometry().height() * 0.85) if screen is not None else 720
        across = int(screen.availableGeometry().width() * 0.9) if screen is not None else 1024
        wanted = content.sizeHint().height() + 60  # the buttons and margins
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        width = min(max(self.minimumWidth(), content.sizeHint().width() + bar + 4), across)
        self.setMinimumWidth(width)
        self.resize(width, min(wanted, room))

    def accept(self) -> None:
        """Save closes the dialog only when the profiles can be saved (else the form says why)."""
        if self.form.problem() is None:
            super().accept()

    def choice(self) -> ProviderChoice:
        """The form's choice with the default instructions typed here."""
        choice = self.form.choice()
        return structs.replace(
            choice, settings=replace(choice.settings, instructions=self.instructions.text())
        )


class WelcomePage(QWidget):
    """First run: guide a new user to a working provider. Built before the keyring is asked (the window shows it
    at once): ``set_key_facts`` fills in whether it works and where a key is kept, and enables Start."""

    def __init__(self, settings: Settings, parent: QWidget | None = None):
        super().__init__(parent)
        title = QLabel(self.tr("<h2>Welcome to Précis</h2>"), self)
        intro = QLabel(
            self.tr(
                "Précis talks to Claude through the Anthropic API or any Anthropic-compatible provider.<br>"
                "1. Paste an API key (from console.anthropic.com, or your provider).<br>"
                "2. Pick your provider's profile (Anthropic, OpenRouter, DeepSeek, a local server…); Test "
                "connection checks it.<br>"
                "3. Pick a model. You can change all of this later in Settings."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.form = ProviderForm(settings, None, "none", self)
        self.start_button = QPushButton(self.tr("Start chatting"), self)
        self.start_button.setObjectName("start_button")
        self.start_button.setEnabled(False)  # until the keyring has answered
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
        # Scrolls on a short screen instead of making the whole window that tall.
        inner = QWidget(self)
        outer = QHBoxLayout(inner)
        outer.setContentsMargins(48, 32, 48, 32)
        outer.addStretch(1)
        outer.addWidget(column, 100)
        outer.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(inner)
        page = QVBoxLayout(self)
        page.setContentsMargins(0, 0, 0, 0)
        page.addWidget(scroll)
        guard_wheel(inner)  # the wheel scrolls the page, never changes a number it passes over

    def set_key_facts(self, keyring_problem: str | None, key_source: str) -> None:
        self.form.set_key_facts(keyring_problem, key_source)
        self.start_button.setEnabled(True)
