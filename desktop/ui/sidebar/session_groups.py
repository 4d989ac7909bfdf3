"""The sidebar's groups: Pinned on top, then by the chat's last activity (Today, Yesterday, Previous 7 days,
Previous 30 days, then one group per month), the way chat apps people know group their history."""

from __future__ import annotations

import datetime as _dt

from PySide6.QtCore import QCoreApplication, QLocale


def group_key(updated_at: float, pinned: bool, now: _dt.datetime) -> str:
    """A stable key for the group of one chat: 'pinned', 'today', 'yesterday', 'week', 'month' or 'YYYY-MM'.
    Days are calendar days in local time, so 'Yesterday' starts at midnight, not 24 hours ago."""
    if pinned:
        return "pinned"
    day = _dt.datetime.fromtimestamp(updated_at).date()
    age = (now.date() - day).days
    if age <= 0:
        return "today"
    if age == 1:
        return "yesterday"
    if age <= 7:
        return "week"
    if age <= 30:
        return "month"
    return f"{day.year:04d}-{day.month:02d}"


def group_label(key: str) -> str:
    words = {
        "pinned": QCoreApplication.translate("SessionGroups", "Pinned"),
        "today": QCoreApplication.translate("SessionGroups", "Today"),
        "yesterday": QCoreApplication.translate("SessionGroups", "Yesterday"),
        "week": QCoreApplication.translate("SessionGroups", "Previous 7 days"),
        "month": QCoreApplication.translate("SessionGroups", "Previous 30 days"),
    }
    if key in words:
        return words[key]
    year, month = (int(p) for p in key.split("-"))
    return f"{QLocale().standaloneMonthName(month)} {year}"
