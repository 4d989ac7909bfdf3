"""How the window words what a session is doing. Views decide from the typed activity, never from this text."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from desktop.ui.api import Activity

# Source strings for Qt Linguist (context "Activity"); idle has no words.
ACTIVITY_TEXT: dict[Activity, object] = {  # QT_TRANSLATE_NOOP is typed as returning object
    Activity.SENDING: QT_TRANSLATE_NOOP("Activity", "Sending…"),
    Activity.WAITING: QT_TRANSLATE_NOOP("Activity", "Waiting for the reply…"),
    Activity.STREAMING: QT_TRANSLATE_NOOP("Activity", "Receiving the reply…"),
    Activity.COMPACTING: QT_TRANSLATE_NOOP("Activity", "Compressing context…"),
    Activity.RECOVERING: QT_TRANSLATE_NOOP("Activity", "Context too long: compressing and resending…"),
    Activity.PREPARING: QT_TRANSLATE_NOOP("Activity", "Preparing a summary in the background…"),
    Activity.TOOLS: QT_TRANSLATE_NOOP("Activity", "Running tools…"),
}


def activity_text(activity: Activity) -> str:
    text = ACTIVITY_TEXT.get(activity, "")
    return QCoreApplication.translate("Activity", str(text)) if text else ""


def stopped_text() -> str:
    return QCoreApplication.translate("Activity", "Stopped")
