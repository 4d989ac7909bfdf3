"""The main window: sessions sidebar, chat pane with header gauge, error banner, status line, composer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QMainWindow,
    QMenu,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop import APP_NAME
from desktop.ui.api import CompactionRecord, Page, SessionInfo, covered_through, events
from desktop.ui.bridge import Bridge
from desktop.ui.composer.composer import Composer
from desktop.ui.gauge.gauge import ContextGauge
from desktop.ui.look.format import fmt_count
from desktop.ui.look.wording import word, word_error
from desktop.ui.projects.projects_ui import ProjectsUi
from desktop.ui.sidebar.organise_ui import OrganiseUi
from desktop.ui.sidebar.sidebar import Sidebar
from desktop.ui.tools.tools_ui import ToolsUi
from desktop.ui.transcript.chat_model import ChatModel
from desktop.ui.transcript.chat_view import ChatView
from desktop.ui.transcript.compaction_card import card_body, card_title, failure_body, failure_title
from desktop.ui.transcript.memory_ui import MemoryUi
from desktop.ui.transcript.reading_ui import ReadingUi
from desktop.ui.window.activity import activity_text, stopped_text
from desktop.ui.window.chat_keys import ChatKeys
from desktop.ui.window.chat_profile import ChatProfileButton
from desktop.ui.window.error_banner import ErrorBanner
from desktop.ui.window.model_picker import ModelPicker
from desktop.ui.window.status_line import StatusLine
from desktop.ui.window.toast import Toast
from desktop.ui.window.window_look import WindowLook
from desktop.ui.window.window_parts import ChatCommands
from desktop.ui.window.window_state import WindowState

if TYPE_CHECKING:  # the dialogs load when first opened: none is needed before the first paint
    from desktop.ui.settings.settings_dialog import ProviderChoice, ProviderForm, SettingsDialog, WelcomePage
    from desktop.ui.transcript.summary_editor import SummaryEditor

WATCH_MS = 1500  # how often the database is checked for chats another process wrote


class MainWindow(QMainWindow):
    def __init__(self, bridge: Bridge, settings_path: Path):
        super().__init__()
        self.bridge = bridge
        self.setWindowTitle(APP_NAME)
        self.resize(1100, 760)
        self._qsettings = QSettings(str(settings_path), QSettings.Format.IniFormat)
        self.session_id: int | None = None
        self._editing: tuple[int, int] | None = None  # (session, user message) being edited in the composer
        self.hidden_through = 0  # messages up to this id are collapsed under the active compaction card
        self._records: list[CompactionRecord] = []
        self._settings_dialog: SettingsDialog | None = None

        self.sidebar = Sidebar(self)
        self.title_label = StatusLine(self)  # elided, never wider than the header leaves it: narrow windows
        self.title_label.setObjectName("session_title")
        self.title_label.setStyleSheet("font-weight: 600;")
        self.gauge = ContextGauge(self)
        self.gauge.setObjectName("context_gauge")
        # The chat's own model: what the provider lists plus the catalog, or any name typed.
        self.model_picker = ModelPicker(self)
        self.model_picker.setObjectName("model_picker")
        self.model_picker.setEditable(True)
        self.model_picker.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_picker.setMinimumContentsLength(16)
        self.model_picker.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.model_picker.setToolTip(self.tr("The model this chat uses (stored with the chat)"))
        self.model_picker.setAccessibleName(self.tr("Model of this chat"))
        self._chat_model_name = ""
        self.profile_button = ChatProfileButton(bridge.profile_names, self)
        self.header_bar = QWidget(self)
        self.header_bar.setObjectName("header_bar")
        self.header_bar.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        header = QHBoxLayout(self.header_bar)
        header.setContentsMargins(8, 6, 12, 6)
        header.addWidget(self.title_label, 1)
        header.addWidget(self.profile_button)
        header.addWidget(self.model_picker)
        header.addWidget(self.gauge)

        self.banner = ErrorBanner(self)
        self.chat = ChatView(self)
        self.chat.setObjectName("chat_view")
        self.chat_model = ChatModel(self)
        self.chat.setModel(self.chat_model)
        self.status = StatusLine(self)
        self.status.setObjectName("status_line")
        self.status.setContentsMargins(12, 0, 12, 0)
        self.composer = Composer(self)
        self.toast = Toast(self.chat)
        self._placeholder = self.composer.edit.placeholderText()

        chat_pane = QWidget(self)
        pane = QVBoxLayout(chat_pane)
        pane.setContentsMargins(0, 0, 0, 0)
        pane.setSpacing(2)
        pane.addWidget(self.header_bar)
        banner_row = QHBoxLayout()
        banner_row.setContentsMargins(12, 0, 12, 0)  # the same side margins as the header
        banner_row.addWidget(self.banner)
        pane.addLayout(banner_row)
        pane.addWidget(self.chat, 1)
        pane.addWidget(self.status)
        pane.addWidget(self.composer)

        self.splitter = QSplitter(self)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(chat_pane)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([240, 860])

        self._welcome: WelcomePage | None = None  # built when first shown (see welcome): it asks the keyring
        self._started = False  # start() has opened the first chat (or shown the first-run page)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.splitter)
        self.setCentralWidget(self.stack)
        # A key kept in the keyring or the key file is looked for in a worker thread after the first paint: by
        # ``start`` for a returning user, by the first-run page (shown at once when nothing was ever set up).
        self._key_unchecked = not bridge.credentials_at_hand()
        if self._key_unchecked and not bridge.engine.set_up_before():
            self._key_unchecked = False
            self.stack.setCurrentWidget(self.welcome)

        # Another process (the CLI) may add chats while the window is open: the bridge watches the database.
        self._watch_timer = QTimer(self)
        self._watch_timer.setInterval(WATCH_MS)
        self._watch_timer.start()
        self._drafts: dict[int, tuple[str, list[str]]] = {}  # per chat: what was typed and not sent
        self._stash: tuple[str, list[str]] | None = None  # the open chat's draft while a message is edited
        self.summary_editor: SummaryEditor | None = None  # the open Edit summary dialog
        self._keep_card: tuple[int, int] | None = (
            None  # (compaction id, y): Show originals keeps the card put
        )
        self._keep_version: tuple[int | None, int] | None = None  # (parent id, y): ‹ › keeps the message put
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(300)
        self._build_menu()
        self._connect()
        self._restore_geometry()
        # The helpers see the window through narrow views (window_parts): the open chat, and the commands lent.
        self.tools = ToolsUi(self, self, header, pane)
        commands = ChatCommands(
            clear_history=self._clear_history, edit_message=self._edit_message, pick_model=self._pick_model
        )
        self.organise = OrganiseUi(
            self,
            self,
            commands,
            header,
            file_menu=self.file_menu,
            bound_actions={"new_chat": self.new_action, "settings": self.settings_action},
        )
        # Projects: New project… (File, the sidebar), a new chat in one, moving chats, the project page.
        self.projects = ProjectsUi(
            self, self, self.sidebar, file_menu=self.file_menu, before=self.import_action
        )
        self.reading = ReadingUi(self, self, header, pane)
        self.state = WindowState(
            self, self, self._qsettings
        )  # the last chat, each chat's place, tool outcomes
        self.keys = ChatKeys(self, self, self.sidebar)  # switch chats, regenerate, attach, flip versions
        self.memory = MemoryUi(
            self,
            self,
            self.reading.actions,
            self.reading.selector,
            self.organise,
            self.menuBar().findChild(QMenu, "chat_menu"),
        )
        # The chat's tools live in the composer card (the header keeps the title, profile, model and gauge).
        self.composer.dock(self.organise.instructions_button, "instructions")
        self.composer.dock(self.tools.workspace, "folder", icon_only=False)
        self.composer.dock(self.reading.thinking, "thinking")
        self.look = WindowLook(
            self,
            header,
            qsettings=self._qsettings,
            sidebar=self.sidebar,
            splitter=self.splitter,
            gauge=self.gauge,
            chat=self.chat,
            composer=self.composer,
            more_icons=(
                self.tools.refresh_icons,
                self.profile_button.refresh_icons,
                self.sidebar.refresh_icons,
            ),
        )

    # --- construction ---------------------------------------------------------------------------------
    def _build_menu(self) -> None:
        file_menu = self.menuBar().addMenu(self.tr("&File"))
        new = QAction(self.tr("&New chat"), self, shortcut=QKeySequence(QKeySequence.StandardKey.New))
        new.triggered.connect(self.new_chat)
        file_menu.addAction(new)
        self.new_action = new
        self.import_action = QAction(self.tr("&Import Claude Code session…"), self)
        self.import_action.triggered.connect(self._choose_import)
        file_menu.addAction(self.import_action)
        rename = QAction(self.tr("&Rename chat…"), self, shortcut=QKeySequence(Qt.Key.Key_F2))
        rename.setShortcutContext(Qt.ShortcutContext.WindowShortcut)  # F2 works wherever the focus is
        rename.triggered.connect(self.sidebar.rename_current)
        file_menu.addAction(rename)
        clear = QAction(self.tr("&Clear history of this chat…"), self)
        clear.triggered.connect(self._clear_history)
        file_menu.addAction(clear)
        settings = QAction(
            self.tr("&Settings…"), self, shortcut=QKeySequence(QKeySequence.StandardKey.Preferences)
        )
        settings.triggered.connect(self.open_settings)
        file_menu.addAction(settings)
        self.settings_action = settings
        self.file_menu = file_menu
        file_menu.addSeparator()
        quit_action = QAction(self.tr("&Quit"), self, shortcut=QKeySequence(QKeySequence.StandardKey.Quit))
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

    def _connect(self) -> None:
        b = self.bridge
        b.engine_event.connect(self._on_event)
        b.sessions_changed.connect(self._on_sessions)
        b.session_opened.connect(self._on_session_opened)
        b.older_loaded.connect(self._on_older)
        b.notice.connect(self._on_notice)
        b.draft_taken.connect(self._on_draft_taken)
        b.failed.connect(self._on_failed)
        self.gauge.compact_requested.connect(lambda: self.memory.preview_compaction())  # the preview first
        self.composer.draft_changed.connect(lambda _t: self._draft_timer.start())
        self._draft_timer.timeout.connect(self._measure_draft)
        self.sidebar.session_selected.connect(lambda sid: b.spawn(b.open_session(sid)))
        self.sidebar.new_requested.connect(self.new_chat)
        self._watch_timer.timeout.connect(lambda: b.spawn(b.watch_database()))
        self.sidebar.rename_requested.connect(lambda sid, t: b.spawn(b.engine.library.rename(sid, t)))
        self.sidebar.pin_requested.connect(
            lambda sid, pinned: b.spawn(b.engine.library.set_pinned(sid, pinned))
        )
        self.sidebar.delete_requested.connect(self._delete_session)
        self.sidebar.filter_changed.connect(lambda text: b.spawn(b.refresh_sessions(text)))
        self.composer.send_requested.connect(self._send)
        # A file is checked when it is added (in a worker thread): one that cannot be sent is refused then.
        self.composer.checker = lambda path: b.check_attachment_later(path, read_tool=self._has_workspace())
        self.composer.attachment_refused.connect(lambda text: self.toast.show_message(text, "error"))
        self.composer.stop_requested.connect(self._stop)
        self.composer.cancel_edit_button.clicked.connect(self.cancel_edit)
        QShortcut(
            QKeySequence(Qt.Key.Key_Escape),
            self.composer.edit,
            self.escape,
            context=Qt.ShortcutContext.WidgetShortcut,
        )
        self.banner.retry_button.clicked.connect(self._retry)
        self.banner.compact_retry_button.clicked.connect(
            lambda: self._banner_action(self.bridge.engine.compact_and_retry)
        )
        self.banner.new_chat_button.clicked.connect(
            lambda: self._banner_action(self.bridge.new_chat_from_summary)
        )
        self.chat.older_requested.connect(self._load_older)
        self.chat.card_action.connect(self._on_card_action)
        self.chat.edit_requested.connect(self._edit_message)
        self.chat.delete_requested.connect(self._delete_message)
        self.chat.regenerate_requested.connect(self.regenerate)
        self.chat.version_requested.connect(self.switch_version)
        self.chat.summarise_before.connect(self._summarise_before)
        self.bridge.handoff_ready.connect(self._on_handoff)
        b.connection_tested.connect(self._on_connection_tested)
        b.models_listed.connect(self._on_models_listed)
        self.model_picker.activated.connect(lambda _i: self._pick_model())
        self.profile_button.profile_chosen.connect(self._pick_profile)
        self.model_picker.popup_opened.connect(
            b.warm_sdk
        )  # the provider's models: asked for once the SDK loads
        line = self.model_picker.lineEdit()
        if line is not None:
            line.editingFinished.connect(self._pick_model)

    def _restore_geometry(self) -> None:
        geometry = self._qsettings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        splitter = self._qsettings.value("window/splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self._watch_timer.stop()
        drafts = self._save_drafts()
        self.composer.discard_pasted(keep={f for _t, files in drafts.values() for f in files})
        self._qsettings.setValue("window/geometry", self.saveGeometry())
        self._qsettings.setValue("window/splitter", self.splitter.saveState())
        self._qsettings.sync()
        super().closeEvent(event)

    @property
    def welcome(self) -> WelcomePage:
        """The first-run page, built when first needed. Its form reports whether the OS keyring works and where a key
        is kept: asking loads the keyring stack (and a desktop's secret service may take its time), so the answer
        comes from a worker thread and fills the form in."""
        if self._welcome is None:
            from desktop.ui.settings.settings_dialog import WelcomePage

            b = self.bridge
            self._welcome = WelcomePage(b.settings, self)
            if self._started:  # else start() asks, once the window has painted
                b.spawn(self._fill_key_facts(self._welcome))
            self._welcome.form.submitted.connect(self._apply_choice)
            self._welcome.form.test_requested.connect(lambda p, key: b.spawn(b.test_connection(p, key)))
            self.stack.addWidget(self._welcome)
        return self._welcome

    # --- actions --------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Load the session list and open the newest session (or create the first one)."""
        if problems := self.bridge.settings.problems:
            self.toast.show_message("; ".join(word(p) for p in problems), "warning", 8000)
        # What was typed and not sent before a restart.
        self._drafts = await self.bridge.engine.library.load_drafts()
        # The first reads (the projects group the list); the engine's events say when to read again.
        _projects, sessions = await asyncio.gather(
            self.bridge.list_projects(), self.bridge.refresh_sessions()
        )
        if sessions and self.stack.currentWidget() is self._welcome:
            # Nothing set up, but chats to read (made by the CLI, or settings.json removed): they show, and the
            # key is looked for like a returning start's.
            self.stack.setCurrentWidget(self.splitter)
            self._key_unchecked = True
        if sessions:
            await self.bridge.open_session(self.state.last_chat(s.id for s in sessions) or sessions[0].id)
        elif self.stack.currentWidget() is not self._welcome:
            await self.bridge.new_session()
        # On the first run the first chat is made once the welcome form is submitted, with the model chosen.
        self._started = True
        if self._welcome is not None:
            self.bridge.spawn(self._fill_key_facts(self._welcome))
        if self._key_unchecked:
            self.bridge.spawn(self._check_key(bool(sessions)))

    async def _fill_key_facts(self, page: WelcomePage | ProviderForm) -> None:
        """The keyring's facts, asked off the UI thread: the keyring stack loads there, and a desktop's secret
        service may take its time (or ask to be unlocked) without holding the window."""
        facts = await self.bridge.key_facts_later()
        if shiboken6.isValid(page):  # Settings may have been closed (and deleted) meanwhile
            page.set_key_facts(*facts)

    async def _check_key(self, chats: bool) -> None:
        """The key kept for this profile, looked for once the window has painted its chat."""
        if await self.bridge.credentials_present_later():
            return
        if chats:  # they stay readable; sending asks for the key (Settings keeps it)
            self.toast.show_message(
                self.tr("No API key: your chats can be read; to send, add a key in Settings."),
                "warning",
                8000,
            )
        else:
            self.stack.setCurrentWidget(self.welcome)

    def _send(self, text: str, files: list[str] | None = None) -> None:
        if self.session_id is None:
            return
        self.banner.hide()
        if not files and self._editing is None and self.organise.run_command(text):
            return  # a window command (/help, /clear, /model): the same action as its menu entry
        editing, self._editing = self._editing, None
        self._show_editing(False)
        if editing is not None and editing[0] == self.session_id:
            self.bridge.spawn(self.bridge.edit_message(editing[1], text))
            return
        self.bridge.spawn(self.bridge.send(self.session_id, text, files or []))

    def _edit_message(self, message_id: int) -> None:
        """Put the message back in the composer; sending adds it as a new version (the earlier one stays)."""
        row = self.chat_model.row_at(self.chat_model.row_of(message_id))
        if row.shown is None or self.session_id is None:
            return
        if self._editing is None:  # the draft steps aside for the edit and comes back after it
            self._stash = self.composer.take_draft()
        self._editing = (self.session_id, message_id)
        self.composer.set_draft(row.shown.text, [])
        self._show_editing(True)
        self.composer.edit.setFocus()
        self.toast.show_message(
            self.tr(
                "Editing a message: sending adds a new version; the earlier one stays "
                "(‹ › under the message). Esc cancels."
            )
        )

    def all_drafts(self) -> dict[int, tuple[str, list[str]]]:
        """Every chat's unsent draft, the open chat's included (its own while an edit borrows the composer)."""
        drafts = dict(self._drafts)
        if self.session_id is not None:
            current = (
                self._stash
                if self._editing is not None
                else (self.composer.edit.toPlainText(), self.composer.attachments)
            )
            if current is not None and (current[0].strip() or current[1]):
                drafts[self.session_id] = current
        return drafts

    def _save_drafts(self) -> dict[int, tuple[str, list[str]]]:
        drafts = self.all_drafts()
        self.bridge.save_drafts(drafts)
        return drafts

    def new_chat(self) -> None:
        """Ctrl+N and the sidebar's New: the open chat is reused while it is empty and untitled."""
        self.bridge.spawn(self.bridge.new_session(reuse=self.session_id))
        self.composer.edit.setFocus()

    def _on_draft_taken(self, session_id: int) -> None:
        self._drafts.pop(session_id, None)  # sent: it is a message now, no longer a draft
        if session_id == self.session_id:
            self.composer.clear()
            if self._editing is None and self._stash is not None:  # an edit was sent: the draft comes back
                self.composer.set_draft(*self._stash)
                self._stash = None
        self._save_drafts()

    def _stop(self) -> None:
        if self.session_id is not None:
            self.bridge.engine.stop(self.session_id)

    def escape(self) -> None:
        """Esc in the composer: leave an edit, else stop what runs."""
        if self._editing is not None:
            self.cancel_edit()
        elif self.session_id is not None and self.bridge.engine.busy(self.session_id):
            self._stop()

    def cancel_edit(self) -> None:
        """Leave an edit: the composer is emptied, nothing is deleted."""
        if self._editing is None:
            return
        self._editing = None
        self._show_editing(False)
        self.composer.set_draft(*(self._stash or ("", [])))
        self._stash = None

    def _show_editing(self, editing: bool) -> None:
        self.composer.edit.setPlaceholderText(
            self.tr("Editing: sending adds a new version of the message") if editing else self._placeholder
        )
        self.composer.cancel_edit_button.setVisible(editing)

    def regenerate(self, message_id: int) -> None:
        """Answer again in place of a reply (a new version; the old one stays)."""
        if self.session_id is not None and not self.bridge.engine.busy(self.session_id):
            self.banner.hide()
            self.bridge.spawn(self.bridge.regenerate(message_id))

    def switch_version(self, message_id: int, delta: int) -> None:
        """‹ / ›: show another version of a message; the page is read again when the path moved."""
        if self.session_id is None:
            return
        if self.bridge.engine.busy(self.session_id):
            self.toast.show_message(self.tr("Versions can be switched when the reply has finished."))
            return
        # The page is read again: the other version comes back where this one is on screen.
        row = self.chat_model.row_of(message_id)
        msg = self.chat_model.row_at(row).message if row >= 0 else None
        if msg is not None:
            top = self.chat.visualRect(self.chat_model.index(row)).top()
            self._keep_version = (msg.parent_id, top)
        self.bridge.spawn(self.bridge.switch_version(message_id, delta))

    def _scroll_version_to(self, parent_id: int | None, y: int) -> bool:
        """Put the message shown after ``parent_id`` (the version just switched to) at ``y``."""
        ids = self.chat_model.message_ids()
        if parent_id is None:
            target = ids[0] if ids and not self.chat_model.has_older else None
        else:
            after = [i for i in ids if i > parent_id]
            target = after[0] if parent_id in ids and after else None
        if target is None:
            return False
        self.chat.doItemsLayout()
        index = self.chat_model.index(self.chat_model.row_of(target))
        bar = self.chat.verticalScrollBar()
        bar.setValue(bar.value() + self.chat.visualRect(index).top() - y)
        return True

    def _delete_message(self, message_id: int) -> None:
        from PySide6.QtWidgets import QMessageBox  # a dialog class, made when first opened

        if self.session_id is None:
            return
        answer = QMessageBox.question(
            self,
            self.tr("Delete message"),
            self.tr("Delete this message?"),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.bridge.spawn(self.bridge.engine.delete_message(self.session_id, message_id))

    def _clear_history(self) -> None:
        from PySide6.QtWidgets import QMessageBox  # a dialog class, made when first opened

        if self.session_id is None:
            return
        answer = QMessageBox.question(
            self,
            self.tr("Clear history"),
            self.tr("Delete every message and summary of this chat? The chat itself stays."),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.bridge.spawn(self.bridge.clear_history(self.session_id))

    def _retry(self) -> None:
        if self.session_id is None:
            return
        self.banner.hide()
        self.bridge.spawn(self.bridge.engine.retry(self.session_id))

    def continue_reply(self) -> None:
        """Resume the newest reply the provider cut short."""
        if self.session_id is not None and not self.bridge.engine.busy(self.session_id):
            self.banner.hide()
            self.bridge.spawn(self.bridge.continue_reply(self.session_id))

    def _banner_action(self, action: Any) -> None:
        if self.session_id is not None:
            self.banner.hide()
            self.bridge.spawn(action(self.session_id))

    def _load_older(self) -> None:
        oldest = self.chat_model.oldest_message_id()
        if self.session_id is not None and oldest is not None:
            self.bridge.spawn(self.bridge.load_older(self.session_id, oldest, self.hidden_through))

    def _delete_session(self, session_id: int) -> None:
        self._drafts.pop(session_id, None)
        if session_id == self.session_id:
            self.session_id = None
            self.chat_model.set_messages([], False)
            self.title_label.clear()
        self.bridge.spawn(self._delete_session_async(session_id))

    async def _delete_session_async(self, session_id: int) -> None:
        """After the open chat is deleted another one opens (a new one if none is left): a message typed next
        always has a chat to go to."""
        sessions = await self.bridge.delete_session(session_id)
        if self.session_id is None:
            if sessions:
                await self.bridge.open_session(sessions[0].id)
            else:
                await self.bridge.new_session()

    def _choose_import(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # a dialog class, made when first opened

        projects = Path.home() / ".claude" / "projects"
        path, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Import Claude Code session"),
            str(projects if projects.is_dir() else Path.home()),
            self.tr("Claude Code sessions (*.jsonl);;All files (*)"),
        )
        if path:
            self.import_file(path)

    def import_file(self, path: str) -> Any:
        """Import ``path`` as a new session and open it; a failure shows its reason in the banner."""
        return self.bridge.spawn(self._import_async(path))

    async def _import_async(self, path: str) -> None:
        from desktop.ui.api import ImportFailed  # the importer loads with the first import

        self.status.setText(self.tr("Importing %s…") % Path(path).name)
        try:
            result = await self.bridge.import_claude_code(path)
        except ImportFailed as exc:
            self.status.clear()
            self.banner.show_error(
                self.tr("Import failed: %s") % word_error(exc), actions=()
            )  # nothing to retry
            return
        self.status.flash("; ".join(word(line) for line in result.status_lines()))

    def open_settings(self) -> SettingsDialog:
        """The profiles dialog (window-modal; the loop keeps running, so Test connection can answer)."""
        from desktop.ui.settings.settings_dialog import SettingsDialog

        # Whether the keyring works and where the key is kept are asked in a worker (see _fill_key_facts); until
        # they answer, the form presumes a working keyring (a save that finds none says so).
        dialog = SettingsDialog(
            self.bridge.settings,
            None,
            "",
            self,
            prices=self.bridge.prices(),
            chats=self.bridge.chats_per_profile(),
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._apply_choice(dialog.choice()))
        self.look.attach_settings(dialog)
        dialog.form.test_requested.connect(
            lambda p, key: self.bridge.spawn(self.bridge.test_connection(p, key))
        )
        self._settings_dialog = dialog
        dialog.finished.connect(lambda _r: setattr(self, "_settings_dialog", None))
        dialog.open()
        self.bridge.spawn(self._fill_key_facts(dialog.form))
        return dialog

    def _on_connection_tested(self, result: Any) -> None:
        for form in (
            self._welcome.form if self._welcome else None,
            self._settings_dialog.form if self._settings_dialog else None,
        ):
            if form is not None:
                form.show_test_result(
                    result.ok, "\n".join(word(line) for line in result.lines), result.models
                )

    # --- the chat's model -----------------------------------------------------------------------------
    def _show_chat_model(self, model: str) -> None:
        self._chat_model_name = model
        self.model_picker.blockSignals(True)
        self._set_picker_text(model)
        self.model_picker.blockSignals(False)

    def _set_picker_text(self, model: str) -> None:
        # The list opens on the chat's model (highlighted and scrolled to), not on its first entry.
        self.model_picker.setCurrentIndex(self.model_picker.findText(model))
        self.model_picker.setEditText(model)
        if (edit := self.model_picker.lineEdit()) is not None:
            edit.setCursorPosition(0)  # a long model id shows its start ("claude-…"), not its tail

    def _on_models_listed(self, session_id: int, models: list[str]) -> None:
        if session_id != self.session_id:
            return
        current = self._chat_model_name
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        self.model_picker.addItems(models if current in models or not current else [current, *models])
        self._set_picker_text(current)
        self.model_picker.blockSignals(False)

    def _pick_model(self) -> None:
        model = self.model_picker.currentText().strip()
        if self.session_id is None or not model or model == self._chat_model_name:
            return
        if self.bridge.engine.busy(self.session_id):
            self._show_chat_model(self._chat_model_name)
            self.toast.show_message(self.tr("The model can change when the reply has finished."))
            return
        self._chat_model_name = model
        self.bridge.spawn(self.bridge.set_chat_model(self.session_id, model))
        self.toast.show_message(self.tr("This chat now uses %s.") % model)

    def _show_chat_profile(self, session: SessionInfo) -> None:
        self.profile_button.show_profile(session.profile or self.bridge.settings.profile)
        if session.model and session.model != self._chat_model_name and not self.model_picker.hasFocus():
            self._show_chat_model(session.model)  # a profile switch may have brought the profile's own model

    def _pick_profile(self, name: str) -> None:
        """The header's profile menu: the open chat moves to that profile (once its reply has finished)."""
        if self.session_id is None:
            return
        if self.bridge.engine.busy(self.session_id):
            self.toast.show_message(self.tr("The profile can change when the reply has finished."))
            return
        self.bridge.spawn(self.bridge.set_chat_profile(self.session_id, name))
        self.toast.show_message(self.tr("This chat now uses the profile “{name}”.").format(name=name))

    def _apply_choice(self, choice: ProviderChoice) -> None:
        self.bridge.spawn(self._apply_choice_async(choice))

    async def _apply_choice_async(self, choice: ProviderChoice) -> None:
        language = self.bridge.settings.language
        error = await self.bridge.apply_provider_choice(choice)
        if error:
            self.banner.show_error(error, actions=())
            return
        if choice.settings.language != language:  # every widget was worded at start: it cannot change now
            self.toast.show_message(
                self.tr("The language applies at the next start of Précis."), "info", 6000
            )
        if self.bridge.credentials_present():
            self.stack.setCurrentWidget(self.splitter)
            if self.session_id is None:  # the first run: the first chat, with the model just chosen
                sessions = await self.bridge.listed()
                if sessions:
                    await self.bridge.open_session(sessions[0].id)
                else:
                    await self.bridge.new_session()

    # --- bridge signals -------------------------------------------------------------------------------
    def _on_event(self, event: events.EngineEvent) -> None:
        """Engine events, as the engine emitted them; only the open session's reach the views."""
        # Another program holds the database: said whatever chat is open.
        if isinstance(event, events.StorageWaiting):
            self.toast.show_message(event.text, "warning", 8000)
            return
        if event.session_id != self.session_id:
            return
        match event:
            case events.MessageAdded(message=msg):
                self.chat_model.append_message(msg)
                self.chat.scroll_to_bottom()
            case events.MessageUpdated(message=msg) | events.TurnDone(message=msg):
                self.chat_model.update_message(msg)
            case events.MessageRemoved(message_id=mid):
                self.chat_model.remove_message(mid)
            case events.TextDelta(message_id=mid, text=text):
                self.chat_model.append_text(mid, text)
            case events.UsageUpdate(usage=usage):
                if usage.output_tokens:
                    self.status.setText(
                        self.tr("%s · %s tokens")
                        % (
                            activity_text(self.bridge.engine.activity(event.session_id)),
                            fmt_count(usage.output_tokens),
                        )
                    )
            case events.StatusChanged():
                self._on_status(event)
            case events.TurnError(message=message, actions=actions):
                self.banner.show_error(word(message), tuple(actions))
            case events.CommandOutput(title=title, text=text):
                # The report is aligned plain text (the same as `precis context` prints): keep it monospaced.
                self.chat_model.add_notice(f"```text\n{word(text)}\n```", word(title))
                self.chat.scroll_to_bottom()
            case events.ContextChanged(snapshot=snapshot):
                self.gauge.set_snapshot(snapshot)
                self.chat_model.set_trimmed(set(snapshot.trimmed))
                # The gauge has its figure: the rest of the first page is laid out on the next loop turn.
                QTimer.singleShot(0, self.chat_model.release_pending)
            case events.CompactionChanged(note=note, records=records) if note != "switch":
                self._on_compactions(list(records))  # (a switch is followed by PathChanged: the page is read)
            case events.SummaryFailed(reason=reason, rejected=rejected):
                self._on_summary_failed(reason, rejected)
            case events.Notice(text=text, level=level):
                self.toast.show_message(word(text), level)
            case events.PathChanged():  # originals stay shown if they were
                self.bridge.spawn(
                    self.bridge.open_session(
                        event.session_id, originals=not self.hidden_through and bool(self._records)
                    )
                )

    def _on_sessions(self, sessions: list[SessionInfo]) -> None:
        self.sidebar.set_sessions(sessions)
        current = next((s for s in sessions if s.id == self.session_id), None)
        if current is not None:
            self.title_label.setText(current.title)
            self._show_chat_profile(current)

    def _on_session_opened(self, page: Page) -> None:
        session = page.session
        if self._editing is not None and self._editing[0] != session.id:
            self.cancel_edit()  # an edit belongs to its chat
        switched = self.session_id != session.id
        if switched:  # each chat keeps its own draft
            text, files = self.composer.take_draft()
            if self.session_id is not None:
                if text.strip() or files:
                    self._drafts[self.session_id] = (text, files)
                text, files = "", []
            # After the open chat was deleted, what was typed moves on with the window rather than vanish.
            saved_text, saved_files = self._drafts.pop(session.id, ("", []))
            self.composer.set_draft("\n\n".join(t for t in (saved_text, text) if t), saved_files + files)
        self.session_id = session.id
        self.hidden_through = page.hidden_through
        self.title_label.setText(session.title)
        self._show_chat_profile(session)
        self._show_chat_model(session.model or self.bridge.settings.model)
        if switched or self.model_picker.count() == 0:
            self.bridge.spawn(self.bridge.list_models(session.id))
        self.sidebar.select(session.id)
        self.banner.hide()
        self.status.clear()
        self.chat_model.set_messages(page.messages, page.has_older, page.versions)
        if not switched:  # the same chat read again (a version, the originals): its whole page, as it was
            self.chat_model.release_pending()
        self._records = list(page.compactions)  # what the page was cut by: seen, nothing to collapse
        self._on_compactions(page.compactions)
        keep, self._keep_card = self._keep_card, None
        version, self._keep_version = self._keep_version, None
        if not (keep and not switched and self._scroll_card_to(*keep)) and not (
            version and not switched and self._scroll_version_to(*version)
        ):
            self.chat.scroll_to_bottom()
        activity = self.bridge.engine.activity(session.id)
        self.composer.set_busy(activity.busy)
        self.gauge.set_busy(activity_text(activity) if activity.compacting else None)
        self.composer.edit.setFocus()

    def _on_older(self, session_id: int, page: Page) -> None:
        if session_id == self.session_id:
            self.chat_model.prepend_older(page.messages, page.has_older, page.versions)
            self.chat.older_request_done()

    def _on_status(self, event: events.StatusChanged) -> None:
        activity = event.activity
        self.composer.set_busy(activity.busy)
        self.model_picker.setEnabled(not activity.busy)
        # Compaction in progress shows on the gauge too (a moving segment and its description).
        self.gauge.set_busy(activity_text(activity) if activity.compacting else None)
        if event.stopped:
            self.status.flash(stopped_text())
        else:
            self.status.setText(activity_text(activity))

    def _on_failed(self, text: str) -> None:
        self.toast.show_message(text, "error", 8000)

    def _has_workspace(self) -> bool:
        tools = getattr(self, "tools", None)  # attached after construction
        return bool(tools is not None and tools.workspace.folder)

    def _on_notice(self, session_id: int, text: str, level: str) -> None:
        if session_id == self.session_id:
            self.toast.show_message(text, level)

    def _on_compactions(self, records: list[CompactionRecord]) -> None:
        """Compaction cards sit after the last message each compaction covers; they are views, never stored.

        With originals collapsed only the active card shows. A boundary that moves forward collapses what it
        now covers in place; one that moves back (undo, an edit) needs those messages again, so the page
        is read again.
        """
        if self.session_id is None:
            return
        active = covered_through(records)
        if self.hidden_through and active < self.hidden_through:
            self.bridge.spawn(self.bridge.open_session(self.session_id))
            return
        if active > self.hidden_through and not self._records_seen(records):
            self.chat_model.collapse_through(active)
            self.hidden_through = active
        self._records = list(records)
        self.chat_model.clear_cards("compaction")
        shown = records[-1:] if self.hidden_through else records
        for record in shown:
            key = self.chat_model.add_compaction_card(
                card_body(record),
                int(record.stats.get("messages", 0)),
                int(record.stats.get("tokens_saved", 0)),
                record.covers_through_message_id,
                title=card_title(record),
            )
            self.chat_model.set_card_detail(
                key,
                undoable=record is records[-1],
                record_id=record.id,
                originals_shown=not self.hidden_through,
                retryable=record is records[-1]
                and bool(record.stats.get("snipped"))
                and bool(record.stats.get("summary_error")),
            )

    def _on_summary_failed(self, reason: str, rejected: str) -> None:
        """A summary asked for failed: a card after the newest message says why and what the model wrote, with
        Retry (one such card at a time; a summary that succeeds replaces it)."""
        for row in range(self.chat_model.rowCount() - 1, -1, -1):
            if self.chat_model.row_at(row).detail.get("failure"):
                self.chat_model.remove_card(str(self.chat_model.row_at(row).key))
        self.chat_model.add_card(
            "compaction",
            failure_body(reason, rejected),
            title=failure_title(),
            detail={"failure": True, "expanded": True},
        )
        self.chat.scroll_to_bottom()

    def _scroll_card_to(self, record_id: int, y: int) -> bool:
        """Put the card of compaction ``record_id`` at ``y`` in the viewport; False when it is not shown."""
        row = next(
            (
                i
                for i in range(self.chat_model.rowCount())
                if self.chat_model.row_at(i).detail.get("record_id") == record_id
            ),
            -1,
        )
        if row < 0:
            return False
        self.chat.doItemsLayout()
        index = self.chat_model.index(row)
        bar = self.chat.verticalScrollBar()
        bar.setValue(bar.value() + self.chat.visualRect(index).top() - y)
        return True

    def _records_seen(self, records: list[CompactionRecord]) -> bool:
        return [r.id for r in records] == [r.id for r in self._records]

    def _on_card_action(self, key: str, action: str) -> None:
        if action == "continue":  # a cut reply's own link (the key is its message id)
            self.continue_reply()
            return
        card = self.chat_model.card(key)
        if card is None or self.session_id is None:
            return
        if action == "summary":
            self.chat_model.set_card_detail(key, expanded=not card.detail.get("expanded"))
        elif action == "originals":
            # The page is read again with (or without) the originals: the card stays where it is on screen.
            index = self.chat_model.index(self.chat_model.row_of(key))
            self._keep_card = (int(card.detail.get("record_id", 0)), self.chat.visualRect(index).top())
            self.bridge.spawn(self.bridge.open_session(self.session_id, originals=bool(self.hidden_through)))
        elif action == "undo":
            self.bridge.spawn(self.bridge.engine.undo_compaction(self.session_id))
        elif action == "edit":
            self._edit_summary(int(card.detail.get("record_id", 0)))
        elif action == "handoff":
            self.bridge.spawn(self.bridge.new_chat_from_summary(self.session_id))
        elif action == "retry_summary":
            self.bridge.spawn(self.bridge.engine.compact(self.session_id))

    def _edit_summary(self, record_id: int) -> None:
        """Edit summary: the text the user saves becomes a new compaction row (Undo restores this one)."""
        record = next((r for r in self._records if r.id == record_id), None)
        if record is None or self.session_id is None:
            return
        sid = self.session_id
        from desktop.ui.transcript.summary_editor import SummaryEditor

        self.summary_editor = SummaryEditor(record.summary, self)
        editor = self.summary_editor
        editor.accepted.connect(
            lambda: self.bridge.spawn(self.bridge.engine.edit_summary(sid, editor.text()))
        )
        editor.open()

    def _summarise_before(self, message_id: int) -> None:
        self.memory.preview_compaction(message_id)  # the same preview as Compact now

    def _on_handoff(self, session_id: int, text: str) -> None:
        """The new chat opens with the hand-off text in its composer, to edit before sending."""
        self._drafts[session_id] = (text, [])
        self.bridge.spawn(self.bridge.open_session(session_id))
        self.toast.show_message(self.tr("New chat from the summary: edit it in the composer, then send."))

    def _measure_draft(self) -> None:
        self._save_drafts()
        if self.session_id is not None:
            self.bridge.spawn(self.bridge.measure(self.session_id, self.composer.edit.toPlainText()))
