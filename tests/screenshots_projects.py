"""Screenshots of projects (PRECIS_SHOTS=projects): the sidebar with chats grouped under their projects (one folded),
the project page with its knowledge (one piece inlined, one searchable), and a project's chat with the gauge's
hover card open, its breakdown showing the project's share.

Part of ``python -m tests.screenshots``. The files carry the window's width (``PRECIS_SHOT_SIZE``), so the
scene run at 1440x900 and at 1920x1080 keeps both:
``PRECIS_SHOT_SIZE=1920x1080 PRECIS_SHOTS=projects xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python -m
tests.screenshots OUTDIR``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from tests.fakeapi import FakeAnthropic

STYLE = "# Style guide\n\n" + "\n".join(
    f"{n}. Rust 2021 edition; `cargo clippy -- -D warnings` passes; errors are `thiserror` enums, one per module; "
    "no `unwrap()` outside tests; every public function has a doc comment with an example."
    for n in range(1, 260)
)
GRAMMAR = "\n".join(
    f"rule_{n} := term ('{chr(97 + n % 26)}' term)* ; -- precedence {n % 9}, associativity left, see §{n}"
    for n in range(9_000)
)
REPLY = """The tokenizer should own its input as a `&str` and hand out spans, not copies:

```rust
pub struct Span { pub start: usize, pub end: usize }

pub fn next_token(src: &str, at: usize) -> Option<(Token, Span)> {
    // …
}
```

Per the style guide, lexing errors become a `LexError` variant rather than a panic."""


async def shoot_projects(outdir: Path, srv: FakeAnthropic) -> None:
    from PySide6.QtTest import QTest

    from desktop.ui.api import events
    from tests.screenshots import opened_window, screen, wait_for

    async with opened_window() as (store, engine, bridge, window):
        await window.start()
        width = window.width()
        project = await engine.projects.create(
            "Parser rewrite",
            "Target Rust 2021. Keep the public API of the old parser until version 3.",
            model="claude-sonnet-4-5",  # a 200K window: the grammar is too large to inline, the rest fits
        )
        folder = Path(tempfile.mkdtemp(prefix="precis-shot-"))
        (folder / "style-guide.md").write_text(STYLE, "utf-8")
        (folder / "grammar-spec.txt").write_text(GRAMMAR, "utf-8")
        await engine.projects.add_file(project.id, folder / "style-guide.md")
        await engine.projects.add_file(project.id, folder / "grammar-spec.txt")
        await engine.projects.add_text(
            project.id,
            "Decisions so far",
            "Spans, not copies. One error enum per module. No macros in the lexer.",
        )
        other = await engine.projects.create("Conference talk")
        for title, where in (
            ("Benchmark the lexer", project.id),
            ("Outline the slides", other.id),
            ("Speaker notes", other.id),
            ("Trip to Lisbon", None),
            ("Sourdough starter", None),
        ):
            sid = await engine.new_session(project_id=where)
            await store.add_message(sid, "user", [{"type": "text", "text": title}])
            await engine.library.rename(sid, title)
        window.sidebar.set_collapsed(other.id, True)

        # A chat of the project: its request carries the project's instructions and the knowledge that fits.
        chat = await engine.new_session(project_id=project.id)
        await bridge.listed()
        await bridge.open_session(chat)
        done = asyncio.Event()
        bridge.engine_event.connect(
            lambda e: isinstance(e, events.TurnDone | events.TurnError) and done.set()
        )
        srv.queue_text(REPLY)
        window.composer.edit.setPlainText("How should the new tokenizer hand tokens to the parser?")
        window.composer.send_button.click()
        await asyncio.wait_for(done.wait(), 60)
        await wait_for(lambda: not engine.busy(chat), 20)
        await engine.library.rename(chat, "Tokenizer design")
        await asyncio.sleep(0.6)
        window.toast.hide()

        page = window.projects.open_page(project.id)
        assert page is not None
        page.move(window.x() + (window.width() - page.width()) // 2, window.y() + 60)
        await asyncio.sleep(0.6)
        screen(outdir / f"projects-page-{width}.png", window)
        page.reject()
        await asyncio.sleep(0.3)

        QTest.mouseMove(window.gauge)
        window.gauge.card.anchor_entered()
        await asyncio.sleep(1.6)
        screen(outdir / f"projects-gauge-{width}.png", window)
        window.gauge.card.close_card()
        await asyncio.sleep(0.2)
