"""Run as ``python tests/math_probe.py`` (tests/test_math_warm.py does): a chat view shows a reply with a
formula before matplotlib is loaded, then waits for the formula to be typeset, and prints as JSON what the first
render showed and which thread imported matplotlib."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


class FirstImport:
    """Notes the thread of the first import of matplotlib; finds nothing itself."""

    thread = ""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] == "matplotlib" and not self.thread:
            self.thread = threading.current_thread().name


def main() -> dict[str, Any]:
    finder = FirstImport()
    sys.meta_path.insert(0, finder)
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from desktop.engine.types import StoredMessage
    from desktop.ui.transcript.chat_model import ChatModel
    from desktop.ui.transcript.chat_view import ChatView

    view = ChatView()
    model = ChatModel(view)
    view.setModel(model)
    view.resize(640, 480)
    view.show()
    model.append_message(
        StoredMessage(1, 1, "assistant", [{"type": "text", "text": "Euler: $e^{i\\pi}+1=0$."}])
    )
    model.flush()

    def document() -> Any:
        return view.delegate.document(model.index(0, 0))

    app.processEvents()
    first = document()
    first_html, first_text = first.toHtml(), first.toPlainText()
    typeset_at_once = "precis-math:" in first_html
    deadline = time.monotonic() + 120
    while "precis-math:" not in document().toHtml() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    return {
        "typeset_at_once": typeset_at_once,
        "first_text": first_text,
        "typeset_later": "precis-math:" in document().toHtml(),
        "thread": finder.thread,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
