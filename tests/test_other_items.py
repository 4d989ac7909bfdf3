"""Issue 22's "Other" list, on the real window (offscreen) over a real engine and SQLite store: the menu order, the
language notice, what the hour-long prompt cache does and when, and the smaller reading fixes."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from desktop.engine.context import ContextSnapshot
from desktop.ui import cache_rows
from tests.test_window import until

pytestmark = pytest.mark.qt


async def test_help_is_the_last_menu_after_view(window):
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert "View" in titles and "Help" in titles
    assert titles.index("View") < titles.index("Help") == len(titles) - 1, titles


async def test_saving_another_language_says_it_applies_at_the_next_start(window):
    dialog = window.open_settings()
    combo = dialog.form.language.combo
    combo.setCurrentIndex(combo.findData("zh_CN" if window.bridge.settings.language != "zh_CN" else "en"))
    assert dialog.form.language.note.isVisible()  # the dialog says it before saving
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    await until(lambda: window.toast.isVisible())  # and the window once it is saved
    assert "next start" in window.toast.text()


async def test_saving_the_same_language_says_nothing_about_a_restart(window):
    dialog = window.open_settings()
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()
    await until(lambda: dialog.isHidden())
    for _ in range(20):
        await __import__("asyncio").sleep(0.01)
    assert "next start" not in (window.toast.text() if window.toast.isVisible() else "")


def _snap(ttl: float) -> ContextSnapshot:
    return ContextSnapshot(model="m", window=200_000, max_output=8_000, used=50_000, next_turn=51_000,
                           source="api", cache_expires_at=1_000.0 + ttl, cache_ttl=ttl)


def test_the_hover_card_says_which_cache_lifetime_the_last_request_bought():
    hour = cache_rows.values(_snap(3600.0), now=lambda: 1_000.0)["cache_expiry"] or ""
    five = cache_rows.values(_snap(300.0), now=lambda: 1_000.0)["cache_expiry"] or ""
    assert hour.startswith("1:00:00") and "1 h" in hour
    assert five.startswith("05:00") and "5 min" in five


async def test_the_hour_long_cache_setting_says_when_it_applies(window):
    dialog = window.open_settings()
    tip = dialog.form.long_ttl.toolTip()
    assert "5 minutes" in tip and "next request" in tip
    dialog.reject()
