"""Every compaction decision of a chat comes from the chat's own profile: after the user switches the active
profile, a chat made on a small local server still compacts for that server's window (its model, prices,
calibration, small model and thresholds), never for the newly active cloud profile's.

Driven as a user drives it: the real CLI (each call a fresh engine, as each `precis` process is: the first message
and the report in subprocesses, the turns in this process to keep the test short), a real PRECIS_HOME, two
loopback servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from desktop.cli import main as cli_main
from tests.fakeapi import FakeAnthropic
from tests.test_compaction_engine import prose

LOCAL_MODEL = "local-model"
CLOUD_MODEL = "claude-sonnet-4-6"
TURNS = 12


def _precis(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], env=env, capture_output=True, text=True, timeout=60
    )


def _write_settings(home: Path, local: FakeAnthropic, cloud: FakeAnthropic, active: str) -> None:
    profiles = [
        {"name": "Local", "base_url": local.base_url, "auth": "none", "model": LOCAL_MODEL},
        {"name": "Cloud", "base_url": cloud.base_url, "auth": "none", "model": CLOUD_MODEL},
    ]
    chosen = next(p for p in profiles if p["name"] == active)
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(
        json.dumps(
            {
                "profiles": profiles,
                "profile": active,
                "base_url": chosen["base_url"],
                "model": chosen["model"],
            }
        )
    )


def _overflowed(srv: FakeAnthropic) -> list[str]:
    """The requests the server refused (a prompt over its window is answered 400 "prompt is too long", see
    FakeAnthropic.prepare_message; no other 400 is due here)."""
    return [
        f"request {r.seq}: {r.prompt_tokens} tokens"
        for r in srv.message_requests()
        if r.status == 400 or (r.prompt_tokens or 0) > srv.window
    ]


def test_a_local_chat_compacts_for_its_own_window_after_the_cloud_profile_became_active(
    precis_home, monkeypatch, capsys
):
    with (
        FakeAnthropic(12_000, api_key=None, models=(LOCAL_MODEL,), default_reply_tokens=60) as local,
        FakeAnthropic(200_000, api_key=None) as cloud,
    ):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env["PRECIS_HOME"] = str(precis_home)
        _write_settings(precis_home, local, cloud, "Local")
        first = _precis(["chat", "--new", "Hello, local model. " + prose(40, 1)], env)
        assert first.returncode == 0, first.stderr
        assert "session 1" in first.stderr
        # The user switches to the cloud profile; the chat stays on Local.
        _write_settings(precis_home, local, cloud, "Cloud")
        for name in [k for k in os.environ if k.startswith("ANTHROPIC_")]:
            monkeypatch.delenv(name)
        for i in range(TURNS):  # ~1K tokens each: 12 of them do not fit Local's 12K window
            code = cli_main.main(["chat", "--session", "1", f"Turn {i}. " + prose(600, i)])
            assert code == 0, f"turn {i}: {capsys.readouterr().err}"
        context = _precis(["context", "1"], env)
        assert context.returncode == 0, context.stderr
        exported = _precis(["export", "1", "--format", "json"], env)
        assert exported.returncode == 0, exported.stderr
        triggers = [c["trigger"] for c in json.loads(exported.stdout)["compactions"]]

        assert _overflowed(local) == []  # every compaction happened before the window was reached
        assert {"auto", "background"} & set(triggers), triggers  # the policy compacted by itself
        assert re.search(r"^Summary\s+active", context.stdout, re.M), context.stdout
        assert re.search(r"^Window\s+12,000$", context.stdout, re.M), (
            context.stdout
        )  # Local's, not Cloud's 200K
        assert local.stats.requests >= TURNS + 1
        assert cloud.requests == []  # no turn, summary, count or window look-up reached Cloud
