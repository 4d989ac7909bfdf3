"""The Flatpak manifest, checked offline (building it needs the network for the runtime and the wheels): it
parses, has what flatpak-builder requires, asks for no more sandbox holes than Précis needs, pins every
dependency the package declares to a wheel with a sha256, and installs files that exist."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from desktop import APP_ID

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "packaging" / f"{APP_ID}.yml"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="module")
def manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text("utf-8"))


def modules(manifest: dict) -> list[dict]:
    out = []
    for module in manifest["modules"]:
        if isinstance(module, str):  # an included module file, relative to the manifest
            module = json.loads((MANIFEST.parent / module).read_text("utf-8"))
        out.append(module)
    return out


def test_required_keys_and_runtime(manifest):
    assert manifest["id"] == APP_ID
    assert manifest["runtime"] == "org.kde.Platform" and manifest["sdk"] == "org.kde.Sdk"
    assert re.fullmatch(r"6\.\d+", str(manifest["runtime-version"]))
    assert manifest["command"] == "precis-gui"
    assert "precis-gui" in {ep.name for ep in metadata.entry_points(group="gui_scripts")}
    assert all(m.get("name") and m.get("buildsystem") and m.get("sources") for m in modules(manifest))


def test_sandbox_asks_only_for_what_precis_uses(manifest):
    args = set(manifest["finish-args"])
    assert {
        "--share=network",
        "--talk-name=org.freedesktop.secrets",
        "--socket=wayland",
        "--socket=fallback-x11",
    } <= args
    assert not [
        a for a in args if a.startswith(("--filesystem", "--socket=session-bus", "--socket=system-bus"))
    ]


def test_every_dependency_is_a_pinned_wheel(manifest):
    deps = next(m for m in modules(manifest) if m["name"] == "python3-deps")
    wheels = {}
    for source in deps["sources"]:
        assert source["type"] == "file" and source["url"].startswith("https://files.pythonhosted.org/")
        assert re.fullmatch(r"[0-9a-f]{64}", source["sha256"]), source
        assert source["dest-filename"].endswith(".whl") and source["url"].endswith(
            "/" + source["dest-filename"]
        )
        wheels[canonical(source["dest-filename"].split("-")[0])] = source["dest-filename"]
    assert {"pyside6-essentials", "shiboken6"} <= set(wheels)
    assert re.search(r"manylinux_\d+_\d+_x86_64", wheels["pyside6-essentials"])
    declared = {
        canonical(re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0])
        for req in metadata.requires("precis") or []
        if "extra ==" not in req
    }
    assert declared and declared <= set(wheels), sorted(declared - set(wheels))
    installed = " ".join(deps["build-commands"])
    assert all(canonical(name) in {canonical(n) for n in installed.split()} for name in declared)


def test_the_app_module_installs_files_that_exist(manifest):
    app = next(m for m in modules(manifest) if m["name"] == "precis")
    source = app["sources"][0]
    assert source["type"] == "dir" and (MANIFEST.parent / source["path"]).resolve() == ROOT
    commands = "\n".join(app["build-commands"])
    for path in re.findall(r"desktop/assets/[\w./${}-]+", commands):
        for size in ("16", "32", "48", "64", "128", "256", "512"):
            assert (ROOT / path.replace("${size}", size)).is_file(), path
    assert "share/applications" in commands and "share/metainfo" in commands and "hicolor" in commands


@pytest.mark.skipif(not shutil.which("flatpak-builder"), reason="flatpak-builder is not installed")
def test_flatpak_builder_reads_the_manifest(tmp_path):
    # It makes its state folder (.flatpak-builder/) in the working directory: keep that out of the checkout.
    res = subprocess.run(
        ["flatpak-builder", "--show-manifest", str(MANIFEST)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    shown = json.loads(res.stdout)
    assert shown["id"] == APP_ID and [m["name"] for m in shown["modules"]] == ["python3-deps", "precis"]
