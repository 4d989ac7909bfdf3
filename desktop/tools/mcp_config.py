"""MCP server configuration: ``mcp.json`` in the config folder, in the de-facto shape
``{"mcpServers": {name: {command, args, env, cwd} | {url, headers}}}``.

Unknown keys are kept as they are (other tools write them too). ``disabled: true`` switches a server off.
Secrets (env values, headers) are kept in the keyring; the file holds the placeholder ``KEYRING`` in their
place. When no keyring is usable the values stay in the file (0600), and ``problems`` says so.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from desktop.engine.config import files
from desktop.engine.config.files import write_private
from desktop.tools.permissions import definition_origin

CONFIG_NAME = "mcp.json"
KEYRING = "<keyring>"
SERVICE = "precis-mcp"
log = logging.getLogger(__name__)


class McpServerConfig(Struct):
    """One MCP server as configured: a command to start or a URL to reach."""

    name: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, written back unchanged

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def origin(self) -> str:
        """What the server is, hashed (command, args, cwd, env, or URL and headers): approvals are bound to it."""
        if self.url:
            return definition_origin({"url": self.url, "headers": self.headers})
        return definition_origin(
            {"command": self.command, "args": self.args, "cwd": self.cwd, "env": self.env}
        )

    @property
    def where(self) -> str:
        return self.url or " ".join([self.command, *self.args])

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> McpServerConfig:
        known = {"command", "args", "env", "cwd", "url", "headers", "disabled", "enabled"}
        args = data.get("args") or []
        return cls(
            name=name,
            command=str(data.get("command") or ""),
            args=[str(a) for a in args] if isinstance(args, list) else [],
            env={str(k): str(v) for k, v in (data.get("env") or {}).items()}
            if isinstance(data.get("env"), dict)
            else {},
            cwd=str(data["cwd"]) if data.get("cwd") else None,
            url=str(data.get("url") or ""),
            headers={str(k): str(v) for k, v in (data.get("headers") or {}).items()}
            if isinstance(data.get("headers"), dict)
            else {},
            enabled=not data.get("disabled", False) and data.get("enabled", True) is not False,
            extra={k: v for k, v in data.items() if k not in known},
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        if self.url:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        else:
            out["command"] = self.command
            if self.args:
                out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
            if self.cwd:
                out["cwd"] = self.cwd
        if not self.enabled:
            out["disabled"] = True
        return out


class McpConfig(Struct):
    """The MCP servers configured, and what could not be read."""

    servers: list[McpServerConfig] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> McpServerConfig | None:
        return next((s for s in self.servers if s.name == name), None)


def _secret_user(server: str, kind: str, key: str) -> str:
    return f"{server}:{kind}:{key}"


def _reveal(config: McpServerConfig, problems: list[str]) -> None:
    for kind, values in (("env", config.env), ("header", config.headers)):
        for key, value in list(values.items()):
            if value != KEYRING:
                continue
            import keyring.errors  # here: the keyring stack is heavy, and most configs keep no secret

            try:
                secret = keyring.get_password(SERVICE, _secret_user(config.name, kind, key))
            except keyring.errors.KeyringError:
                secret = None
            if secret is None:
                problems.append(f"{config.name}: the secret {key} is not in the keyring")
                secret = ""
            values[key] = secret


def load_config(path: Path) -> McpConfig:
    """Never raises: an unreadable file or a bad entry is a problem line, the rest is used."""
    problems: list[str] = []
    try:
        data = json.loads(files.decode_text(files.read_regular(path)))
    except FileNotFoundError:
        return McpConfig()
    except (files.NotRegularFile, files.FileTooLarge) as exc:
        return McpConfig([], [f"{path.name} could not be read ({exc})"])
    except (OSError, ValueError, RecursionError) as exc:
        return McpConfig([], [f"{path.name} could not be read ({type(exc).__name__})"])
    servers_json = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers_json, dict):
        return McpConfig([], [f"{path.name} has no mcpServers object"] if data else [])
    servers = []
    for name, entry in servers_json.items():
        try:  # a lone surrogate escape (\udXXX) can be neither shown, stored nor passed to a process
            json.dumps([name, entry], ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, ValueError, RecursionError):
            problems.append(
                f"{name.encode('utf-8', 'replace').decode()}: holds text that is not valid Unicode; ignored"
            )
            continue
        if not isinstance(entry, dict) or not (entry.get("command") or entry.get("url")):
            problems.append(f"{name}: needs a command or a url")
            continue
        server = McpServerConfig.from_json(str(name), entry)
        _reveal(server, problems)
        servers.append(server)
    return McpConfig(servers, problems)


def save_config(path: Path, config: McpConfig) -> list[str]:
    """Write the file with secrets moved to the keyring. Returns problems (e.g. no keyring: kept in the file)."""
    problems: list[str] = []
    out: dict[str, Any] = {}
    for server in config.servers:
        entry = server.to_json()
        for kind, field_name in (("env", "env"), ("header", "headers")):
            values = entry.get(field_name)
            if not values:
                continue
            import keyring.errors  # imported when a secret is kept (see _reveal)

            hidden = {}
            for key, value in values.items():
                try:
                    keyring.set_password(SERVICE, _secret_user(server.name, kind, key), value)
                    hidden[key] = KEYRING
                except keyring.errors.KeyringError:
                    problems.append(
                        f"{server.name}: no keyring; {key} is kept in {path.name} (readable by you only)"
                    )
                    hidden[key] = value
            entry[field_name] = hidden
        out[server.name] = entry
    write_private(path, json.dumps({"mcpServers": out}, indent=2, ensure_ascii=False) + "\n")
    return problems


def forget_secrets(old: McpServerConfig, new: McpServerConfig | None) -> None:
    """Drop the keyring entries ``old`` had that ``new`` (the same server after an edit, or None) no longer uses."""
    for kind, values, kept in (
        ("env", old.env, new.env if new else {}),
        ("header", old.headers, new.headers if new else {}),
    ):
        for key in values:
            if new is not None and new.name == old.name and key in kept:
                continue
            import keyring.errors  # imported when a secret is dropped (see _reveal)

            # Not there (no keyring, or already gone) is fine.
            with contextlib.suppress(keyring.errors.KeyringError):
                keyring.delete_password(SERVICE, _secret_user(old.name, kind, key))


def claude_desktop_config_path() -> Path:
    """Where Claude Desktop keeps its configuration on this platform."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return (
            Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
            / "Claude"
            / "claude_desktop_config.json"
        )
    return (
        Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
        / "Claude"
        / "claude_desktop_config.json"
    )


def import_claude_desktop(target: Path, source: Path | None = None) -> tuple[list[str], list[str]]:
    """Merge Claude Desktop's servers into ``target`` (an existing name is kept). Returns (imported, problems)."""
    source = source or claude_desktop_config_path()
    if not source.is_file():
        return [], [f"no Claude Desktop configuration at {source}"]
    theirs = load_config(source)
    ours = load_config(target)
    imported = []
    for server in theirs.servers:
        if ours.get(server.name) is None:
            ours.servers.append(server)
            imported.append(server.name)
    problems = theirs.problems + save_config(target, ours)
    return imported, problems
