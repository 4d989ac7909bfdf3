"""The keyboard shortcuts: one table, used both to bind them and to list them (Help › Keyboard shortcuts)."""

from __future__ import annotations

import sys

from msgspec import Struct
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtGui import QKeySequence

_CONTEXT = "Shortcuts"
# On macOS Option+Left/Right move by words in a text field: the version keys add Ctrl there.
VERSION_MODIFIER = "Ctrl+Alt" if sys.platform == "darwin" else "Alt"
SHOWN_IN_FULL = 4  # more keys than this are shown as a range ("Ctrl+1 … Ctrl+9")


class Shortcut(Struct, frozen=True):
    """A keyboard shortcut: the command, its keys and when it applies."""

    command: str  # what it does, by name (the binder maps it to an action)
    keys: tuple[str, ...]  # portable key sequences ("Ctrl+K"); the first is the one shown first
    # Marked with QT_TRANSLATE_NOOP (typed as object), translated when shown: describe(), condition().
    what: object
    where: object = ""  # when it applies; '' for anywhere in the window
    bound_here: bool = True  # False: another part of the window binds it (listed here only)

    def describe(self) -> str:
        return QCoreApplication.translate(_CONTEXT, str(self.what))

    def condition(self) -> str:
        return QCoreApplication.translate(_CONTEXT, str(self.where)) if self.where else ""

    def sequences(self) -> list[QKeySequence]:
        return [QKeySequence(k) for k in self.keys]

    def shown_keys(self) -> str:
        """As the platform writes them (⌘ on macOS)."""
        shown = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in self.sequences()]
        return f"{shown[0]} … {shown[-1]}" if len(shown) > SHOWN_IN_FULL else ", ".join(shown)


SHORTCUTS: tuple[Shortcut, ...] = (
    Shortcut("search", ("Ctrl+K",), QT_TRANSLATE_NOOP("Shortcuts", "Search all chats")),
    Shortcut("find", ("Ctrl+F",), QT_TRANSLATE_NOOP("Shortcuts", "Find in this chat"), bound_here=False),
    Shortcut("new_chat", ("Ctrl+Shift+N", "Ctrl+N"), QT_TRANSLATE_NOOP("Shortcuts", "New chat")),
    Shortcut("settings", ("Ctrl+,",), QT_TRANSLATE_NOOP("Shortcuts", "Settings")),
    Shortcut("copy_last_reply", ("Ctrl+Shift+C",), QT_TRANSLATE_NOOP("Shortcuts", "Copy the last reply")),
    Shortcut(
        "escape",
        ("Esc",),
        QT_TRANSLATE_NOOP("Shortcuts", "Stop the reply, or cancel an edit"),
        QT_TRANSLATE_NOOP("Shortcuts", "in the composer"),
        bound_here=False,
    ),
    Shortcut(
        "edit_last",
        ("Up",),
        QT_TRANSLATE_NOOP("Shortcuts", "Edit your last message"),
        QT_TRANSLATE_NOOP("Shortcuts", "in an empty composer"),
        bound_here=False,
    ),
    Shortcut(
        "send",
        ("Return",),
        QT_TRANSLATE_NOOP("Shortcuts", "Send"),
        QT_TRANSLATE_NOOP("Shortcuts", "in the composer"),
        bound_here=False,
    ),
    Shortcut(
        "newline",
        ("Shift+Return",),
        QT_TRANSLATE_NOOP("Shortcuts", "New line"),
        QT_TRANSLATE_NOOP("Shortcuts", "in the composer"),
        bound_here=False,
    ),
    Shortcut(
        "commands",
        ("/",),
        QT_TRANSLATE_NOOP("Shortcuts", "Commands: /help /clear /model /compact /context"),
        QT_TRANSLATE_NOOP("Shortcuts", "at the start of the composer"),
        bound_here=False,
    ),
    Shortcut("rename", ("F2",), QT_TRANSLATE_NOOP("Shortcuts", "Rename the chat"), bound_here=False),
    Shortcut(
        "next_chat", ("Ctrl+Tab", "Ctrl+PgDown"), QT_TRANSLATE_NOOP("Shortcuts", "Next chat in the list")
    ),
    Shortcut(
        "previous_chat",
        ("Ctrl+Shift+Tab", "Ctrl+PgUp"),
        QT_TRANSLATE_NOOP("Shortcuts", "Previous chat in the list"),
    ),
    Shortcut(
        "chat_number",
        tuple(f"Ctrl+{n}" for n in range(1, 10)),
        QT_TRANSLATE_NOOP("Shortcuts", "Open the first to ninth chat in the list"),
    ),
    Shortcut("regenerate", ("Ctrl+R",), QT_TRANSLATE_NOOP("Shortcuts", "Regenerate the last reply")),
    Shortcut("attach", ("Ctrl+U",), QT_TRANSLATE_NOOP("Shortcuts", "Attach files")),
    Shortcut(
        "previous_version",
        (f"{VERSION_MODIFIER}+Left",),
        QT_TRANSLATE_NOOP("Shortcuts", "Previous version of a message (‹)"),
        QT_TRANSLATE_NOOP("Shortcuts", "the selected message, else the newest one with versions"),
    ),
    Shortcut(
        "next_version",
        (f"{VERSION_MODIFIER}+Right",),
        QT_TRANSLATE_NOOP("Shortcuts", "Next version of a message (›)"),
        QT_TRANSLATE_NOOP("Shortcuts", "the selected message, else the newest one with versions"),
    ),
    Shortcut(
        "toggle_tool",
        ("Return", "Space"),
        QT_TRANSLATE_NOOP("Shortcuts", "Expand or collapse a tool block"),
        QT_TRANSLATE_NOOP("Shortcuts", "on a tool block in the chat: Tab to the chat, then ↑ ↓"),
        bound_here=False,
    ),
    Shortcut(
        "toggle_sidebar",
        ("Ctrl+B",),
        QT_TRANSLATE_NOOP("Shortcuts", "Show or hide the chats"),
        bound_here=False,
    ),
    Shortcut(
        "allow_once",
        ("Ctrl+Return",),
        QT_TRANSLATE_NOOP("Shortcuts", "Allow the tool call once"),
        QT_TRANSLATE_NOOP("Shortcuts", "while a tool asks for permission"),
        bound_here=False,
    ),
    Shortcut(
        "allow_chat",
        ("Ctrl+Shift+Return",),
        QT_TRANSLATE_NOOP("Shortcuts", "Allow the tool for this chat"),
        QT_TRANSLATE_NOOP("Shortcuts", "while a tool asks for permission"),
        bound_here=False,
    ),
    Shortcut(
        "deny",
        ("Ctrl+Shift+D",),
        QT_TRANSLATE_NOOP("Shortcuts", "Deny the tool call"),
        QT_TRANSLATE_NOOP("Shortcuts", "while a tool asks for permission"),
        bound_here=False,
    ),
    Shortcut("shortcuts", ("Ctrl+/",), QT_TRANSLATE_NOOP("Shortcuts", "Keyboard shortcuts")),
    Shortcut("quit", ("Ctrl+Q",), QT_TRANSLATE_NOOP("Shortcuts", "Quit"), bound_here=False),
)


def shortcut(command: str) -> Shortcut:
    return next(s for s in SHORTCUTS if s.command == command)
