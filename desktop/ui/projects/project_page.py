"""A project's page: its name and instructions, what a new chat of it takes (profile, model, workspace), whether
recall reaches across it, and its knowledge — each piece with its kind, its size and whether requests carry it
whole (inlined) or the model finds it with recall (searchable, too large for the project's share of the window).

Knowledge is added and removed at once; the other fields are kept by Save."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import AttachmentRefused, Project, StorageError
from desktop.ui.bridge import Bridge
from desktop.ui.look.format import fmt_count
from desktop.ui.look.plural import numerus
from desktop.ui.look.wording import word_error

NAME_ROLE = Qt.ItemDataRole.UserRole  # a knowledge row's name (what Remove names)


class AddTextDialog(QDialog):
    """Add text…: a title and the text (pasted notes, a spec) kept as the project's knowledge."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("add_text_dialog")
        self.setWindowTitle(self.tr("Add text to the project"))
        self.resize(560, 420)
        self.title = QLineEdit(self)
        self.title.setObjectName("knowledge_title")
        self.title.setPlaceholderText(self.tr("Title, e.g. “Style guide”"))
        self.title.setAccessibleName(self.tr("Title of the text"))
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("knowledge_text")
        self.text.setPlaceholderText(self.tr("Paste or type what every chat of the project should know."))
        self.text.setAccessibleName(self.tr("Text to add"))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.add_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.add_button.setText(self.tr("Add"))
        self.add_button.setEnabled(False)
        self.text.textChanged.connect(
            lambda: self.add_button.setEnabled(bool(self.text.toPlainText().strip()))
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.buttons)


class ProjectPage(QDialog):
    new_chat_requested = Signal(int)  # project id: a new chat in it (its edits saved first)
    delete_requested = Signal(int)  # project id: Delete project… (the window asks about its chats)

    def __init__(self, bridge: Bridge, project: Project, parent: QWidget | None = None):
        super().__init__(parent)
        self.bridge = bridge
        self.project = project
        self.project_id = project.id
        self.add_text_dialog: AddTextDialog | None = None
        self.setObjectName("project_page")
        self.setWindowTitle(self.tr("Project settings"))
        self.resize(760, 680)

        self.name = QLineEdit(project.name, self)
        self.name.setObjectName("project_name")
        self.name.setAccessibleName(self.tr("Project name"))
        self.instructions = QPlainTextEdit(self)
        self.instructions.setObjectName("project_instructions")
        self.instructions.setPlainText(project.instructions)
        self.instructions.setPlaceholderText(
            self.tr("What every chat of this project keeps to, e.g. “Answer in British English.”")
        )
        self.instructions.setAccessibleName(self.tr("Project instructions"))
        self.instructions.setMinimumHeight(90)

        self.profile = QComboBox(self)
        self.profile.setObjectName("project_profile")
        self.profile.setAccessibleName(self.tr("Profile of a new chat"))
        self.profile.addItem(self.tr("The active profile"), None)
        names = bridge.profile_names()
        for name in [
            *names,
            *([project.profile] if project.profile and project.profile not in names else []),
        ]:
            self.profile.addItem(name, name)
        self.profile.setCurrentIndex(max(0, self.profile.findData(project.profile)) if project.profile else 0)
        self.model = QComboBox(self)
        self.model.setObjectName("project_model")
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setAccessibleName(self.tr("Model of a new chat"))
        self._fill_models()
        self.model.setEditText(project.model or "")
        line = self.model.lineEdit()
        if line is not None:
            line.setPlaceholderText(self.tr("The profile's model"))
        self.workspace = QLineEdit(project.workspace or "", self)
        self.workspace.setObjectName("project_workspace")
        self.workspace.setPlaceholderText(self.tr("None: no workspace, no tools"))
        self.workspace.setClearButtonEnabled(True)
        self.workspace.setAccessibleName(self.tr("Workspace folder of a new chat"))
        self.choose_button = QPushButton(self.tr("Choose…"), self)
        self.choose_button.setObjectName("project_workspace_choose")
        self.choose_button.setAccessibleName(self.tr("Choose the workspace folder"))
        folder = QHBoxLayout()
        folder.addWidget(self.workspace, 1)
        folder.addWidget(self.choose_button)
        self.recall = QCheckBox(self.tr("Recall across this project"), self)
        self.recall.setObjectName("project_recall")
        self.recall.setChecked(project.recall)
        self.recall.setToolTip(
            self.tr(
                "The recall tool of its chats also searches this project's knowledge and its other chats."
            )
        )

        form = QFormLayout()
        form.addRow(self.tr("Name:"), self.name)
        form.addRow(self.tr("Instructions:"), self.instructions)
        defaults = QGroupBox(self.tr("A new chat of this project"), self)
        defaults_form = QFormLayout(defaults)
        defaults_form.addRow(self.tr("Profile:"), self.profile)
        defaults_form.addRow(self.tr("Model:"), self.model)
        defaults_form.addRow(self.tr("Workspace:"), folder)

        knowledge = QGroupBox(self.tr("Knowledge"), self)
        self.knowledge = QTreeWidget(knowledge)
        self.knowledge.setObjectName("project_knowledge")
        self.knowledge.setAccessibleName(self.tr("Knowledge of the project"))
        self.knowledge.setRootIsDecorated(False)
        self.knowledge.setUniformRowHeights(True)
        self.knowledge.setHeaderLabels(
            [self.tr("Name"), self.tr("Kind"), self.tr("Size"), self.tr("In requests")]
        )
        header = self.knowledge.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.summary = QLabel(knowledge)
        self.summary.setObjectName("project_knowledge_summary")
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet("color: palette(placeholder-text);")
        self.add_files_button = QPushButton(self.tr("Add files…"), knowledge)
        self.add_files_button.setObjectName("project_add_files")
        self.add_text_button = QPushButton(self.tr("Add text…"), knowledge)
        self.add_text_button.setObjectName("project_add_text")
        self.remove_button = QPushButton(self.tr("Remove"), knowledge)
        self.remove_button.setObjectName("project_remove_knowledge")
        self.remove_button.setEnabled(False)
        self.refusal = QLabel(knowledge)
        self.refusal.setObjectName("project_refusal")
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet("color: #c0392b;")
        self.refusal.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_files_button)
        buttons.addWidget(self.add_text_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        box = QVBoxLayout(knowledge)
        box.addWidget(self.summary)
        box.addWidget(self.knowledge, 1)
        box.addLayout(buttons)
        box.addWidget(self.refusal)

        self.error = QLabel(self)
        self.error.setObjectName("project_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b;")
        self.error.hide()
        self.new_chat_button = QPushButton(self.tr("New chat in this project"), self)
        self.new_chat_button.setObjectName("project_new_chat")
        self.delete_button = QPushButton(self.tr("Delete project…"), self)
        self.delete_button.setObjectName("project_delete")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        bottom = QHBoxLayout()
        bottom.addWidget(self.new_chat_button)
        bottom.addWidget(self.delete_button)
        bottom.addStretch(1)
        bottom.addWidget(self.buttons)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.recall)
        layout.addWidget(defaults)
        layout.addWidget(knowledge, 1)
        layout.addWidget(self.error)
        layout.addLayout(bottom)

        self.buttons.accepted.connect(lambda: bridge.spawn(self.save(close=True)))
        self.buttons.rejected.connect(self.reject)
        self.new_chat_button.clicked.connect(lambda: bridge.spawn(self._new_chat()))
        self.delete_button.clicked.connect(lambda: self.delete_requested.emit(self.project_id))
        self.choose_button.clicked.connect(self._choose_folder)
        self.add_files_button.clicked.connect(self._choose_files)
        self.add_text_button.clicked.connect(self.open_add_text)
        self.remove_button.clicked.connect(lambda: bridge.spawn(self.remove_selected()))
        self.knowledge.itemSelectionChanged.connect(
            lambda: self.remove_button.setEnabled(bool(self.knowledge.selectedItems()))
        )
        self.profile.currentIndexChanged.connect(lambda _i: self._profile_changed())
        self.model.currentTextChanged.connect(lambda _t: self.show_knowledge())
        bridge.projects_changed.connect(self._on_projects)
        self.show_knowledge()

    # --- the defaults ---------------------------------------------------------------------------------------
    def chosen_profile(self) -> str | None:
        data = self.profile.currentData()
        return data if isinstance(data, str) and data else None

    def chosen_model(self) -> str | None:
        return self.model.currentText().strip() or None

    def _fill_models(self) -> None:
        typed = self.model.currentText()
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItems(self.bridge.models_of_profile(self.chosen_profile()))
        self.model.setEditText(typed)
        self.model.blockSignals(False)

    def _profile_changed(self) -> None:
        self._fill_models()
        self.show_knowledge()

    def _choose_folder(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # a dialog class, made when first opened

        start = self.workspace.text().strip() or str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, self.tr("Workspace of a new chat"), start)
        if folder:
            self.workspace.setText(folder)

    def changes(self) -> dict[str, str | bool | None]:
        """What Save would change (the fields that differ from the project as stored)."""
        p = self.project
        workspace = self.workspace.text().strip()
        fields: dict[str, str | bool | None] = {
            "name": self.name.text().strip(),
            "instructions": self.instructions.toPlainText().strip(),
            "profile": self.chosen_profile(),
            "model": self.chosen_model(),
            "workspace": str(Path(workspace).expanduser()) if workspace else None,
            "recall": self.recall.isChecked(),
        }
        stored: dict[str, str | bool | None] = {
            "name": p.name,
            "instructions": p.instructions,
            "profile": p.profile,
            "model": p.model,
            "workspace": p.workspace,
            "recall": p.recall,
        }
        return {k: v for k, v in fields.items() if v != stored[k]}

    async def save(self, close: bool = False) -> bool:
        """Keep the edits (a refusal — a taken name, a workspace that is not a folder — is shown, the page stays).
        ``close``: the page closes once they are kept."""
        changes = self.changes()
        if not self.name.text().strip():
            self._show_error(self.tr("A project needs a name."))
            return False
        workspace = changes.get("workspace")
        if isinstance(workspace, str) and not Path(workspace).is_dir():
            self._show_error(self.tr("{folder} is not a folder.").format(folder=workspace))
            return False
        if changes:
            try:
                self.project = await self.bridge.engine.projects.update(self.project_id, **changes)
            except (StorageError, ValueError) as exc:
                self._show_error(word_error(exc))
                return False
        self.error.hide()
        if close:
            self.accept()
        return True

    async def _new_chat(self) -> None:
        if await self.save():
            self.new_chat_requested.emit(self.project_id)
            self.accept()

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    # --- the knowledge ---------------------------------------------------------------------------------------
    def show_knowledge(self) -> None:
        """The knowledge list as the project's chats would carry it with the model chosen here."""
        model, context = self.bridge.project_context(
            self.project_id, self.chosen_profile(), self.chosen_model()
        )
        pieces = self.bridge.engine.projects.knowledge(self.project_id)
        inlined = set(context.inlined) if context is not None else set()
        selected = {i.data(0, NAME_ROLE) for i in self.knowledge.selectedItems()}
        self.knowledge.clear()
        for piece in pieces:
            size = len(piece.text)
            row = QTreeWidgetItem(
                [
                    piece.name,
                    self.tr("File") if piece.kind == "file" else self.tr("Text"),
                    numerus(self.tr("{count} character(s)"), size).format(count=fmt_count(size)),
                    self.tr("Inlined") if piece.name in inlined else self.tr("Searchable"),
                ]
            )
            row.setData(0, NAME_ROLE, piece.name)
            row.setToolTip(0, piece.source or piece.name)
            row.setToolTip(
                3,
                self.tr("Sent whole with every request of the project's chats.")
                if piece.name in inlined
                else self.tr(
                    "Too large for the project's share of the window: the model finds it with recall."
                ),
            )
            if piece.name not in inlined:
                row.setForeground(3, self.palette().placeholderText())
            self.knowledge.addTopLevelItem(row)
            row.setSelected(piece.name in selected)
        tokens = context.tokens if context is not None else 0
        if not pieces:
            self.summary.setText(
                self.tr(
                    "No knowledge yet: add text files or pasted text every chat of the project should know."
                )
            )
        else:
            self.summary.setText(
                self.tr(
                    "About {tokens} tokens of the project go with every request on {model}; searchable pieces "
                    "are found with recall."
                ).format(tokens=fmt_count(tokens), model=model)
            )

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The knowledge list as shown: (name, kind, size, in requests)."""
        out = []
        for i in range(self.knowledge.topLevelItemCount()):
            item = self.knowledge.topLevelItem(i)
            if item is not None:
                out.append((item.text(0), item.text(1), item.text(2), item.text(3)))
        return out

    def _choose_files(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # a dialog class, made when first opened

        paths, _ = QFileDialog.getOpenFileNames(
            self, self.tr("Add files to the project"), str(Path.home()), self.tr("Text files (*)")
        )
        if paths:
            self.bridge.spawn(self.add_files(paths))

    async def add_files(self, paths: list[str]) -> int:
        """Add text files as knowledge (their text as it is now); a file that is not text is refused in one
        sentence, the others are added. How many were added."""
        added, refused = 0, []
        for path in paths:
            try:
                await self.bridge.engine.projects.add_file(self.project_id, path)
                added += 1
            except (AttachmentRefused, StorageError, OSError, ValueError) as exc:
                refused.append(word_error(exc))
        self._show_refusal(refused)
        return added

    def _show_refusal(self, refused: list[str]) -> None:
        if not refused:
            self.refusal.hide()
            return
        more = len(refused) - 1
        text = refused[0].rstrip(".") + "."
        if more:
            text += " " + numerus(self.tr("(%n more file(s) refused.)", "", more), more)
        self.refusal.setText(text)
        self.refusal.setToolTip("\n".join(refused))
        self.refusal.show()

    def open_add_text(self) -> AddTextDialog:
        dialog = AddTextDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(
            lambda: self.bridge.spawn(self.add_text(dialog.title.text(), dialog.text.toPlainText()))
        )
        dialog.finished.connect(lambda _r: setattr(self, "add_text_dialog", None))
        self.add_text_dialog = dialog
        dialog.open()
        return dialog

    async def add_text(self, title: str, text: str) -> bool:
        try:
            await self.bridge.engine.projects.add_text(
                self.project_id, title.strip() or self.tr("Pasted text"), text
            )
        except (StorageError, ValueError) as exc:
            self._show_refusal([word_error(exc)])
            return False
        self._show_refusal([])
        return True

    async def remove_selected(self) -> None:
        for item in self.knowledge.selectedItems():
            await self.remove(str(item.data(0, NAME_ROLE)))

    async def remove(self, name: str) -> bool:
        try:
            await self.bridge.engine.projects.remove(self.project_id, name)
        except (StorageError, ValueError) as exc:
            self._show_refusal([word_error(exc)])
            return False
        return True

    def _on_projects(self, projects: list[Project]) -> None:
        """The projects changed (here, or elsewhere): the knowledge list again; a deleted project's page closes."""
        current = next((p for p in projects if p.id == self.project_id), None)
        if current is None:
            self.reject()
            return
        self.show_knowledge()
