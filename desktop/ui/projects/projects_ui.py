"""What the window does with projects: New project… (the sidebar's button, File, a chat's Move to project ›), a new
chat in a project (a project header's "+" or menu, its page), moving a chat in or out, the project page, and
Delete project…, which asks what becomes of the project's chats and never deletes one without that answer.

Attached to the main window after it is built; it sees the window through the narrow view of window_parts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QMainWindow, QMenu, QMessageBox, QPushButton

from desktop.ui.api import Project, StorageError, one_line
from desktop.ui.bridge import Bridge
from desktop.ui.look.plural import numerus
from desktop.ui.look.wording import word_error
from desktop.ui.sidebar.sidebar import Sidebar

if TYPE_CHECKING:
    from desktop.ui.projects.project_page import ProjectPage
    from desktop.ui.window.window_parts import OpenChat

ChatsChoice = Literal["keep", "delete"]


class ProjectsUi(QObject):
    """``file_menu`` gets New project… and a Projects submenu (each project's page) before ``before``."""

    def __init__(
        self, host: QMainWindow, view: OpenChat, sidebar: Sidebar, *, file_menu: QMenu, before: QAction
    ) -> None:
        super().__init__(host)
        self.host = host
        self.view = view
        self.sidebar = sidebar
        self.bridge: Bridge = view.bridge
        self.page: ProjectPage | None = None  # the open project page
        self.name_dialog: QInputDialog | None = None  # New project…'s name, while it is asked
        self.delete_box: QMessageBox | None = None  # Delete project…'s question, while it is asked

        self.new_action = QAction(self.tr("New &project…"), host)
        self.new_action.setObjectName("new_project_action")
        self.new_action.triggered.connect(lambda: self.ask_new_project())
        self.menu = QMenu(self.tr("Pro&jects"), host)
        self.menu.setObjectName("projects_menu")
        self.menu.aboutToShow.connect(self._fill_menu)
        file_menu.insertAction(before, self.new_action)
        file_menu.insertMenu(before, self.menu)

        b = self.bridge
        b.projects_changed.connect(sidebar.set_projects)
        sidebar.new_project_requested.connect(self.ask_new_project)
        sidebar.new_in_project_requested.connect(self.new_chat_in)
        sidebar.project_page_requested.connect(self.open_page)
        sidebar.project_delete_requested.connect(self.ask_delete)
        sidebar.move_requested.connect(self.move_chat)

    def _fill_menu(self) -> None:
        """File › Projects: each project's page (the keyboard's way to what a project header offers)."""
        self.menu.clear()
        projects = self.sidebar.projects()
        for project in projects:
            action = self.menu.addAction(one_line(project.name))
            action.triggered.connect(lambda _c=False, pid=project.id: self.open_page(pid))
        if not projects:
            self.menu.addAction(self.tr("No projects yet")).setEnabled(False)

    # --- new ------------------------------------------------------------------------------------------------
    def ask_new_project(self, move: int | None = None) -> QInputDialog:
        """New project…: its name, then its page. ``move``: a chat that goes into it (Move to project ›)."""
        if self.name_dialog is not None:
            self.name_dialog.close()
        dialog = QInputDialog(self.host)
        dialog.setObjectName("new_project_dialog")
        dialog.setWindowTitle(self.tr("New project"))
        dialog.setLabelText(self.tr("Name of the project:"))
        dialog.setOkButtonText(self.tr("Create"))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.textValueSelected.connect(lambda name: self.bridge.spawn(self.create_project(name, move)))
        dialog.finished.connect(lambda _r: setattr(self, "name_dialog", None))
        self.name_dialog = dialog
        dialog.open()
        return dialog

    async def create_project(self, name: str, move: int | None = None) -> Project | None:
        """Make the project (a taken or empty name is refused in a toast), move ``move`` into it, open its page."""
        if not one_line(name):
            self.view.toast.show_message(self.tr("A project needs a name."), "error")
            return None
        try:
            project = await self.bridge.engine.projects.create(name)
        except (StorageError, ValueError) as exc:
            self.view.toast.show_message(word_error(exc), "error")
            return None
        if move is not None:
            await self.bridge.engine.projects.move_chat(move, project.id)
        self.open_page(project.id)
        return project

    def new_chat_in(self, project_id: int) -> Any:
        """A new chat in the project (its profile, model and workspace), opened: the task that makes it."""
        self.view.composer.edit.setFocus()
        return self.bridge.spawn(self.bridge.new_session(reuse=self.view.session_id, project_id=project_id))

    # --- move -----------------------------------------------------------------------------------------------
    def move_chat(self, session_id: int, project_id: int | None) -> Any:
        return self.bridge.spawn(self._move(session_id, project_id))

    async def _move(self, session_id: int, project_id: int | None) -> None:
        project = self.bridge.engine.projects.get(project_id) if project_id is not None else None
        if project_id is not None and project is None:
            return  # deleted meanwhile
        await self.bridge.engine.projects.move_chat(session_id, project_id)
        if project is not None:
            self.view.toast.show_message(self.tr("Moved to the project “{name}”.").format(name=project.name))
        else:
            self.view.toast.show_message(self.tr("Moved out of the project."))
        if session_id == self.view.session_id:  # its requests carry the project's text now (or no longer)
            await self.bridge.measure(session_id, self.view.composer.edit.toPlainText())

    # --- the page -------------------------------------------------------------------------------------------
    def open_page(self, project_id: int) -> ProjectPage | None:
        from desktop.ui.projects.project_page import ProjectPage  # dialogs load when first opened

        project = self.bridge.engine.projects.get(project_id)
        if project is None:
            return None
        if self.page is not None:
            if self.page.project_id == project_id:
                self.page.raise_()
                self.page.activateWindow()
                return self.page
            self.page.close()
        page = ProjectPage(self.bridge, project, self.host)
        page.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        page.new_chat_requested.connect(self.new_chat_in)
        page.delete_requested.connect(self.ask_delete)
        page.finished.connect(lambda _r: self._page_closed(page))
        self.page = page
        page.open()
        return page

    def _page_closed(self, page: ProjectPage) -> None:
        if self.page is page:
            self.page = None

    # --- delete ---------------------------------------------------------------------------------------------
    def ask_delete(self, project_id: int) -> Any:
        """Delete project…: asks what becomes of its chats (kept, out of any project, unless the user says to
        delete them too); Cancel leaves everything as it was."""
        return self.bridge.spawn(self._ask_delete(project_id))

    async def _ask_delete(self, project_id: int) -> None:
        project = self.bridge.engine.projects.get(project_id)
        if project is None:
            return
        chats = sum(1 for s in await self.bridge.engine.library.sessions() if s.project_id == project_id)
        if self.delete_box is not None:
            self.delete_box.close()
        box = QMessageBox(self.page if self.page is not None else self.host)
        box.setObjectName("delete_project_box")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(self.tr("Delete project"))
        box.setText(self.tr("Delete the project “{name}”?").format(name=project.name))
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        if chats:
            box.setInformativeText(
                numerus(
                    self.tr(
                        "Its instructions and knowledge go with it. Its %n chat(s) can stay, outside any "
                        "project, or be deleted too.",
                        "",
                        chats,
                    ),
                    chats,
                )
            )
            keep = box.addButton(self.tr("Keep the chats"), QMessageBox.ButtonRole.AcceptRole)
            keep.setObjectName("keep_chats")
            gone = box.addButton(self.tr("Delete the chats too"), QMessageBox.ButtonRole.DestructiveRole)
            gone.setObjectName("delete_chats")
            box.setDefaultButton(keep)
            answers: list[tuple[QPushButton, ChatsChoice]] = [(keep, "keep"), (gone, "delete")]
        else:
            box.setInformativeText(self.tr("Its instructions and knowledge go with it. It has no chats."))
            delete = box.addButton(self.tr("Delete project"), QMessageBox.ButtonRole.DestructiveRole)
            delete.setObjectName("delete_project")
            box.setDefaultButton(cancel)
            answers = [(delete, "keep")]
        box.setEscapeButton(cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(_result: int) -> None:
            self.delete_box = None
            clicked = box.clickedButton()
            choice = next((c for button, c in answers if button is clicked), None)
            if choice is not None:
                self.bridge.spawn(self.delete_project(project_id, choice))

        box.finished.connect(answered)
        self.delete_box = box
        box.open()

    async def delete_project(self, project_id: int, chats: ChatsChoice) -> list[int]:
        """Delete the project as the user answered: its chats kept (out of any project) or deleted with it, each
        as Delete chat does (a reply running in one is stopped first). The ids of the chats deleted."""
        project = self.bridge.engine.projects.get(project_id)
        if project is None:
            return []
        doomed = (
            [s.id for s in await self.bridge.engine.library.sessions() if s.project_id == project_id]
            if chats == "delete"
            else []
        )
        for session_id in doomed:
            await self.bridge.engine.delete_session(session_id)
        doomed += await self.bridge.engine.projects.delete(project_id, chats)
        if chats == "delete":
            count = len(set(doomed))
            text = numerus(
                self.tr("Deleted the project “{name}” and its %n chat(s).", "", count), count
            ).format(name=project.name)
        else:
            text = self.tr("Deleted the project “{name}”; its chats were kept.").format(name=project.name)
        self.view.toast.show_message(text)
        if self.view.session_id in doomed:  # the open chat went with it: another opens (or a new one)
            sessions = await self.bridge.listed()
            if sessions:
                await self.bridge.open_session(sessions[0].id)
            else:
                await self.bridge.new_session()
        return doomed
