"""The preview before Compact now (and "Summarise up to here"): what the summary replaces, what stays verbatim,
what is pinned, the estimated saving and the summary's cost, from the compactor's own plan. The user can keep
messages verbatim (they are pinned) and give the summary a focus before confirming."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.api import Plan, StoredMessage, Verdict, display
from desktop.ui.look.format import fmt_cost, fmt_count
from desktop.ui.look.plural import numerus

ID_ROLE = Qt.ItemDataRole.UserRole
EXCERPT = 160  # characters of a message a line of the list shows


def excerpt(msg: StoredMessage) -> str:
    """One line for a message: its text, or what its tool calls and results are."""
    words: list[str] = []
    for part in display.parts_of(msg.content):
        if isinstance(part, display.Markdown):
            words.append(part.text)
        elif isinstance(part, display.ToolCall):
            words.append(f"[{part.name}]")
        elif isinstance(part, display.ToolResult):
            words.append("[result]")
        elif isinstance(part, display.Attachment):
            words.append(f"[{'image' if part.type == display.AttachmentKind.IMAGE else 'document'}]")
    text = " ".join(" ".join(words).split())
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1].rstrip() + "…"


class CompactPreview(QDialog):
    """Shows ``plan``; ``excluded()`` and ``focus()`` are what the user chose when it is accepted."""

    def __init__(self, plan: Plan, parent: QWidget | None = None, *, up_to_here: bool = False):
        super().__init__(parent)
        self.setObjectName("compact_preview")
        self.setWindowTitle(self.tr("Summarise up to here") if up_to_here else self.tr("Compact now"))
        self.resize(720, 560)
        self.plan = plan
        layout = QVBoxLayout(self)
        self.facts = QLabel(self)
        self.facts.setObjectName("preview_facts")
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.facts)
        self.hint = QLabel(
            self.tr(
                "Tick a message to keep it verbatim: it is pinned beside the summary instead of "
                "being summarised."
            ),
            self,
        )
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(self.hint)
        self.messages = QListWidget(self)
        self.messages.setObjectName("preview_messages")
        self.messages.setAccessibleName(self.tr("Messages the summary replaces"))
        self.messages.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # long lines elide
        self.messages.setTextElideMode(Qt.TextElideMode.ElideRight)
        layout.addWidget(self.messages, 1)
        self.focus_edit = QLineEdit(self)
        self.focus_edit.setObjectName("preview_focus")
        self.focus_edit.setPlaceholderText(
            self.tr("Focus (optional): what the summary must keep, e.g. the API design")
        )
        self.focus_edit.setAccessibleName(self.tr("Focus of the summary"))
        layout.addWidget(self.focus_edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.compact_button = self.buttons.addButton(
            self.tr("Summarise"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.compact_button.setObjectName("preview_compact")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._fill()

    def _payback(self, verdict: Verdict) -> str:
        """When the reads it spares have paid for it, and whether Précis would make it now on its own."""
        turns = verdict.payback_turns
        if turns is None:
            return self.tr("It takes nothing off later requests: by cost alone Précis would not make it.")
        n = max(1, math.ceil(turns))
        if verdict.pays:
            return numerus(self.tr("It pays for itself after about %n turn(s).", None, n), n)
        return numerus(
            self.tr("It pays for itself after about %n turn(s); by cost alone Précis would wait.", None, n), n
        )

    def _fill(self) -> None:
        plan = self.plan
        if plan.refusal:
            self.facts.setText(plan.refusal)
            self.compact_button.setEnabled(False)
            self.messages.hide()
            self.hint.hide()
            self.focus_edit.hide()
            return
        pinned = set(plan.pinned)
        lines = [
            self.tr("<b>Summarised: {n} messages</b> (about {tokens} tokens).").format(
                n=fmt_count(len(plan.head)), tokens=fmt_count(plan.summarised)
            ),
            self.tr("Kept verbatim: the {kept} newest messages.").format(kept=fmt_count(len(plan.kept))),
        ]
        if pinned:
            lines.append(
                self.tr("Pinned, kept verbatim beside the summary: {n}.").format(n=fmt_count(len(pinned)))
            )
        share = f" ({100 * plan.saving / plan.before:.0f} %)" if plan.before else ""
        lines.append(
            self.tr("Every later request carries about {saving} tokens less{share}.").format(
                saving=fmt_count(plan.saving), share=share
            )
        )
        if plan.cost is not None:
            lines.append(self.tr("The summary costs about {cost}.").format(cost=fmt_cost(plan.cost)))
        if plan.verdict is not None:
            lines.append(self._payback(plan.verdict))
        self.facts.setText("<br>".join(lines))
        for msg in plan.head:
            who = {"user": self.tr("You"), "assistant": self.tr("Assistant")}.get(msg.role, msg.role)
            mark = f"{self.tr('pinned')} · " if msg.id in pinned else ""  # before the text, which is elided
            item = QListWidgetItem(f"#{msg.id} · {who} · {mark}{excerpt(msg)}", self.messages)
            item.setData(ID_ROLE, msg.id)
            if msg.id in pinned:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                item.setCheckState(Qt.CheckState.Checked)
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
        self.messages.scrollToBottom()

    def excluded(self) -> list[int]:
        """The messages the user ticked to keep verbatim (not those already pinned)."""
        pinned = set(self.plan.pinned)
        out = []
        for i in range(self.messages.count()):
            item = self.messages.item(i)
            mid = int(item.data(ID_ROLE))
            if item.checkState() == Qt.CheckState.Checked and mid not in pinned:
                out.append(mid)
        return out

    def focus(self) -> str:
        return self.focus_edit.text().strip()
