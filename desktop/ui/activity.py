"""How the window words what a session is doing. Views decide from the typed activity, never from this text."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.ui.bridge import Activity

# Source strings for Qt Linguist (context "Activity"); idle has no words.
ACTIVITY_TEXT: dict[Activity, str] = {
    Activity.SENDING: "Sending…",
    Activity.WAITING: "Waiting for the reply…",
    Activity.STREAMING: "Receiving the reply…",
    Activity.COMPACTING: "Compressing context…",
    Activity.RECOVERING: "Context too long: compressing and resending…",
    Activity.PREPARING: "Preparing a summary in the background…",
    Activity.TOOLS: "Running tools…",
}


def activity_text(activity: Activity) -> str:
    text = ACTIVITY_TEXT.get(activity, "")
    return QCoreApplication.translate("Activity", text) if text else ""


def stopped_text() -> str:
    return QCoreApplication.translate("Activity", "Stopped")
