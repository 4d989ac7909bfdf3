"""Screenshots of the MCP page's add and edit forms (secrets masked) and of a permission prompt that waits for
its own chat. Called from tests.screenshots (scenes ``mcp`` and ``prompt``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from tests.fakeapi import FakeAnthropic, Fault
from tests.screenshots import opened_window, screen, wait_for


async def shoot_mcp_forms(outdir: Path, srv: FakeAnthropic) -> None:
    home = Path(os.environ["PRECIS_HOME"])
    (home / "config").mkdir(parents=True, exist_ok=True)
    repo = Path(__file__).resolve().parent.parent
    (home / "config" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "calc": {"command": sys.executable, "args": ["-m", "tests.mcp_server"], "cwd": str(repo)},
                    "issues": {
                        "url": "https://mcp.example.com/mcp",
                        "headers": {"Authorization": "Bearer sk-demo-4242"},
                        "disabled": True,
                    },
                }
            }
        )
    )
    async with opened_window(tools=True) as (_store, _engine, bridge, window):
        await window.start()
        await wait_for(lambda: bridge._toolbox.servers["calc"].state == "ready", 30)
        dialog = window.tools.open_mcp()
        dialog.move(0, 0)
        page = dialog.page
        await wait_for(lambda: page.servers.count() == 2)
        page.add_button.click()
        form = page.form
        form.name.setText("github")
        form.command.setText("npx")
        form.args.setText("-y @modelcontextprotocol/server-github")
        form.env.set_rows({"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_demo0123456789"})
        form.move(120, 90)
        await asyncio.sleep(0.6)
        screen(outdir / "window-mcp-form-stdio.png", dialog)
        form.close()
        page.servers.setCurrentRow(1)
        page.edit_button.click()
        form = page.form
        form.headers.add_row("X-Team", "precis")
        form.move(120, 90)
        await asyncio.sleep(0.6)
        screen(outdir / "window-mcp-form-http.png", dialog)
        form.close()
        dialog.close()


async def shoot_prompt_per_chat(outdir: Path, srv: FakeAnthropic) -> None:
    """Chat A asks while chat B is open: B shows no prompt, only a note; back in A the prompt is there."""
    ws = Path(tempfile.mkdtemp(prefix="precis-ws-")) / "demo-project"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text("def parse_config(path):\n    return open(path).read()\n")
    async with opened_window(tools=True) as (_store, _engine, bridge, window):
        await window.start()
        a = await bridge.new_session()
        await asyncio.sleep(0.3)
        window.gauge.card.close_card()
        window.tools.set_workspace(str(ws))
        await wait_for(lambda: bool(window.tools.workspace.folder))
        await asyncio.sleep(0.3)
        hold = Fault.hold(after=1, timeout=30)
        srv.queue_fault(hold)
        srv.queue_tool_use(
            "edit",
            {
                "file_path": "src/config.py",
                "old_string": "open(path).read()",
                "new_string": 'open(path, encoding="utf-8").read()',
            },
            text="I'll make the parser read UTF-8.",
        )
        srv.queue_text("Done: the parser reads UTF-8.")
        window.composer.edit.setPlainText("Make parse_config read UTF-8.")
        window.composer.send_button.click()
        await wait_for(lambda: hold.reached.is_set(), 20)
        await bridge.engine.library.rename(a, "Parser fix")
        await bridge.new_session()
        window.composer.edit.setPlainText("Meanwhile, another question…")
        hold.release.set()
        await wait_for(lambda: bool(bridge._toolbox.pending()), 20)
        await wait_for(lambda: "waiting for your answer" in window.status.text())
        await asyncio.sleep(0.5)
        screen(outdir / "window-tools-prompt-other-chat.png", window)
        await bridge.open_session(a)
        await wait_for(lambda: window.tools.prompt.isVisible())
        await asyncio.sleep(0.5)
        screen(outdir / "window-tools-prompt-own-chat.png", window)
        window.tools.prompt.close_all()
        await wait_for(lambda: not bridge.engine.busy(a), 20)
