"""Simplified Chinese: the translation files, the language choice, the engine's typed messages worded in the
user's language, and a walk over every widget of the window, the settings dialog and the hover card (menus
included) that fails on any English left."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import string
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop import i18n
from desktop.engine import messages as M
from desktop.i18n import catalog

ROOT = Path(__file__).resolve().parent.parent
TS = i18n.ts_file(i18n.CHINESE)


def _messages(path: Path) -> Iterator[tuple[str, str, ET.Element]]:
    for context in ET.parse(path).getroot().iter("context"):
        for message in context.iter("message"):
            node = message.find("translation")
            assert node is not None
            yield context.findtext("name") or "", message.findtext("source") or "", node


def _targets(node: ET.Element) -> list[str]:
    """A translation's text, or each of its numerus forms (a %n string's translation has no text of its own)."""
    forms = [form.text or "" for form in node.iter("numerusform")]
    return forms or [node.text or ""]


def _fields(text: str) -> list[str]:
    """The str.format fields and %-placeholders of a text, sorted."""
    names = sorted(
        f"{{{name}{':' + spec if spec else ''}}}"
        for _lit, name, spec, _conv in string.Formatter().parse(text)
        if name is not None
    )
    return names + sorted(re.findall(r"%[sdn]|%\d", text))


# --- the .ts file ------------------------------------------------------------------------------------------


def test_every_translation_keeps_the_placeholders_and_accelerator_of_its_source():
    checked = 0
    numerus = 0
    for context, source, node in _messages(TS):
        for target in _targets(node):
            assert _fields(target) == _fields(source), (context, source, target)
            assert ("&" in source.replace("&&", "")) == bool(re.search(r"\(&\w\)|&\w", target)), (
                context,
                source,
            )
        checked += 1
        numerus += len(list(node.iter("numerusform"))) > 0
    assert checked > 250 and numerus > 0


def test_lupdate_finds_no_string_without_a_translation(tmp_path):
    """Every string the code marks (tr, translate, QT_TRANSLATE_NOOP, the engine's messages) is in the .ts and
    translated: a new string fails here until it is translated (run build_translations.py --update)."""
    copy = tmp_path / TS.name
    shutil.copy(TS, copy)
    lupdate = Path(sys.executable).parent / "pyside6-lupdate"
    sources = sorted(str(p) for p in (ROOT / "desktop").rglob("*.py"))
    subprocess.run(
        [str(lupdate), "-locations", "none", "-no-obsolete", "-silent", *sources, "-ts", str(copy)],
        check=True,
        capture_output=True,
    )
    untranslated = [
        (c, s)
        for c, s, node in _messages(copy)
        if node.get("type") == "unfinished" or not all(t.strip() for t in _targets(node))
    ]
    assert untranslated == []
    # ... and the engine's message ids are among them.
    sources_seen = {s for c, s, _ in _messages(copy) if c == "Engine"}
    assert {M.OVERLOADED, M.COMPACTED, M.CONNECTED, M.TOO_LONG} <= sources_seen


def test_the_language_follows_the_setting_then_the_system():
    assert i18n.choose("", "zh_CN") == "zh_CN"
    assert i18n.choose("", "zh-Hans-CN") == "zh_CN"
    assert i18n.choose("", "zh_SG.UTF-8") == "zh_CN"
    assert i18n.choose("", "zh_TW") == "en"  # Traditional Chinese is not translated: English, not Simplified
    assert i18n.choose("", "de_DE") == "en"
    assert i18n.choose("en", "zh_CN") == "en"
    assert i18n.choose("zh_CN", "en_US") == "zh_CN"
    assert i18n.choose("klingon", "zh_CN") == "zh_CN"  # an unknown setting follows the system


def test_settings_keep_a_language_and_refuse_an_unknown_one(tmp_path):
    from desktop.engine.config.settings import Paths, Settings

    paths = Paths(tmp_path / "c", tmp_path / "d", tmp_path / "k")
    Settings(language="zh_CN").save(paths)
    assert Settings.load(paths, env={}).language == "zh_CN"
    paths.settings_file.write_text('{"language": "fr"}', "utf-8")
    loaded = Settings.load(paths, env={})
    assert loaded.language == "" and any("language" in p for p in loaded.problems)


# --- typed engine messages ---------------------------------------------------------------------------------


def test_a_message_is_its_english_sentence_and_keeps_template_and_arguments():
    msg = M.say(M.COMPACTED, messages=12, saved=31_234)
    assert msg == "Context compacted · 12 messages summarised · ~31,234 tokens saved"
    assert (
        isinstance(msg, str)
        and msg.template == M.COMPACTED
        and msg.params == {"messages": 12, "saved": 31_234}
    )
    import copy
    import pickle

    for again in (copy.deepcopy(msg), pickle.loads(pickle.dumps(msg))):
        assert again == msg and again.template == M.COMPACTED


def test_the_catalog_words_messages_and_their_arguments_in_chinese():
    zh = catalog.load(i18n.CHINESE)
    assert len(zh) > 250
    assert (
        zh.word(M.say(M.COMPACTED, messages=12, saved=31_234))
        == "上下文已压缩 · 摘要了 12 条消息 · 节省约 31,234 词元"
    )
    how = M.say(M.KEY_ACCEPTED, auth=M.say("API key (x-api-key header)"))
    assert "API 密钥" in zh.word(M.say(M.CONNECTED, model="claude-x", tokens_in=3, tokens_out=1, how=how))
    assert zh.word("a provider's own words") == "a provider's own words"
    assert catalog.load(i18n.ENGLISH).word(M.say(M.OVERLOADED)) == str(M.say(M.OVERLOADED))


def test_the_catalog_reads_a_numerus_translation_as_its_form():
    """A %n string's translation is in <numerusform> (Chinese has one form); the catalog (the CLI, and the window
    without a .qm) must give that form, not the whitespace around it."""
    zh = catalog.load(i18n.CHINESE)
    assert zh.translate("Sidebar", "%n message(s)") == "%n 条消息"


def test_a_redacted_error_stays_a_message_and_its_chinese_wording_never_shows_the_key():
    import anthropic
    import httpx2 as httpx

    from desktop.engine.providers.errors import classify

    key = "sk-ant-api03-" + "x" * 40
    response = httpx.Response(
        401,
        request=httpx.Request("POST", "http://x/v1/messages"),
        json={"error": {"type": "authentication_error", "message": f"bad key {key}"}},
    )
    error = classify(anthropic.AuthenticationError("bad", response=response, body=response.json()), [key])
    assert isinstance(error.message, M.Message) and key not in error.message
    worded = catalog.load(i18n.CHINESE).word(error.message)
    assert "服务商拒绝了 API 密钥" in worded and key not in worded


# --- the window under zh_CN --------------------------------------------------------------------------------

# What may stay in Latin letters in a Chinese UI: product and provider names, protocol and format names,
# key names of shortcuts, header and environment names, units. File names, URLs, model ids and variable
# names are removed before the check.
ALLOWED = {
    "Claude",
    "Code",
    "Desktop",
    "Anthropic",
    "OpenRouter",
    "DeepSeek",
    "Zhipu",
    "GLM",
    "Moonshot",
    "Kimi",
    "MiniMax",
    "Ollama",
    "llama",
    "cpp",
    "MCP",
    "API",
    "JSON",
    "Markdown",
    "Python",
    "PDF",
    "URL",
    "GET",
    "Enter",
    "Shift",
    "Ctrl",
    "Esc",
    "Delete",
    "Alt",
    "stderr",
    "Authorization",
    "mcpServers",
    "K",
    "M",
    "s",
    "English",  # the language picker names each language in its own language
    "Secret",
    "Service",
    "Keychain",
    "Credential",
    "Locker",  # the keyrings' own names
}
_NOT_WORDS = [
    re.compile(r"<[^>]+>"),  # HTML tags of rich-text labels
    re.compile(r"\(&\w\)"),  # accelerators: 文件(&F)
    re.compile(r"```\w*"),  # a Markdown fence and its language
    re.compile(r"Précis"),
    re.compile(r"https?://\S+|\b[\w.-]+\.(com|json|jsonl|py|txt|md|ini)\b|\(\*\.\w+\)|\(\*\)"),  # URLs, files
    re.compile(r"\bclaude-[\w.-]+|\b[\w-]+-\d[\w.-]*"),  # model ids
    re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"),  # environment names
    re.compile(r"\bx-api-key\b|/v1/\w+"),
    re.compile(r"\b(Ctrl|Shift|Alt)(\+\w+)+|\bF\d+\b"),  # shortcuts, with all their modifiers
]


def english_left(text: str, data: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    for word in data:  # names the test itself put in (tool names, a folder), before the patterns cut them up
        text = text.replace(word, " ")
    for pattern in _NOT_WORDS:
        text = pattern.sub(" ", text)
    return [w for w in re.findall(r"[A-Za-z]+", text) if w not in ALLOWED]


def test_the_english_check_sees_english_and_lets_names_through():
    assert english_left("Copy message") == ["Copy", "message"]
    assert (
        english_left("复制消息 (Ctrl+C) · claude-sonnet-4-6 · 31.2K · MCP · https://api.anthropic.com") == []
    )
    assert english_left("<b>欢迎使用 Précis</b> ANTHROPIC_API_KEY mcp.json x-api-key") == []
    assert english_left("拒绝 (Ctrl+Shift+D)") == []


def _widget_texts(root) -> Iterator[tuple[str, str]]:  # noqa: ANN001
    """(where, text) of everything a widget tree shows or says: labels, buttons, fields, items, menus, tips."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QAbstractSpinBox,
        QComboBox,
        QDoubleSpinBox,
        QLabel,
        QLineEdit,
        QListWidget,
        QPlainTextEdit,
        QSpinBox,
        QTextEdit,
        QWidget,
    )

    seen_menus: set[int] = set()

    def actions(owner, where):  # noqa: ANN001, ANN202
        for action in owner.actions():
            if action.objectName().startswith("add:") and action.objectName() != "add:Custom":
                continue  # Settings' Add menu: the providers' own names, like the profile box
            yield f"{where}/action", action.text()
            derived = re.sub("&|…", "", action.text())  # Qt's own tooltip of an action: its text
            yield f"{where}/action-tip", action.toolTip() if action.toolTip() != derived else ""
            menu = action.menu()
            if menu is not None and id(menu) not in seen_menus:
                seen_menus.add(id(menu))
                yield f"{where}/menu", menu.title()
                yield from actions(menu, f"{where}/{menu.title()}")

    for w in [root, *root.findChildren(QWidget)]:
        where = f"{type(w).__name__}:{w.objectName()}"
        yield where, w.windowTitle() if w.isWindow() else ""
        yield where + "/tip", w.toolTip()
        yield where + "/name", w.accessibleName()
        yield where + "/description", w.accessibleDescription()
        if isinstance(w, QLabel):
            yield where, w.text()
        if isinstance(w, QAbstractButton):
            yield where, w.text()
        if isinstance(w, QLineEdit | QPlainTextEdit | QTextEdit):
            yield where + "/placeholder", w.placeholderText()
        if isinstance(w, QLineEdit) and w.objectName() not in (
            "profile_name",
            "base_url",
            "model",
            "small_model",
        ):
            yield where + "/text", w.text()  # the fields above hold a profile's own data
        if isinstance(w, QComboBox) and w.objectName() not in (
            "model_picker",
            "profile_box",
        ):  # model ids, names
            for i in range(w.count()):
                yield f"{where}/item{i}", w.itemText(i)
        if isinstance(w, QSpinBox | QDoubleSpinBox):
            yield where, w.prefix().replace("$", "") + w.suffix() + " " + w.specialValueText()
        if isinstance(w, QAbstractSpinBox):
            yield (
                where + "/shown",
                w.text() if w.specialValueText() and w.text() == w.specialValueText() else "",
            )
        if isinstance(w, QListWidget) and w.objectName() != "sessions":
            for i in range(w.count()):
                yield f"{where}/row{i}", w.item(i).text()
        yield from actions(w, where)


def _chat_texts(window) -> Iterator[tuple[str, str]]:  # noqa: ANN001
    """What the transcript paints that Précis wrote (card titles and links, tags, tool lines, menus)."""
    from desktop.ui.transcript.chat_delegate import card_actions, cut_text
    from desktop.ui.transcript.chat_model import Roles, accessible_status, accessible_text

    model, delegate, view = window.chat_model, window.chat.delegate, window.chat
    for i in range(model.rowCount()):
        row, index = model.row_at(i), model.index(i)
        where = f"row{i}:{row.kind}"
        yield where + "/title", row.title
        for seg in row.segments:
            if seg.kind != "markdown" or row.kind != "message":
                yield f"{where}/{seg.kind}", seg.text
        yield where + "/tag", delegate._tag(index)
        yield where + "/tag-tip", delegate.tag_tooltip(index) if delegate._tag(index) else ""
        yield where + "/status", accessible_status(row)
        yield where + "/speaker", accessible_text(row).partition(":")[0]
        if row.kind == "compaction":
            for _action, label in card_actions(row.detail):
                yield where + "/link", label
        if row.cut_reason:
            yield where + "/cut", cut_text(row.cut_reason)
        view.scrollTo(index)
        rect = view.visualRect(index)
        menu = view.build_context_menu(rect.center())
        for action in menu.actions():
            yield where + "/menu", action.text()
        menu.deleteLater()
        assert index.data(Roles.Kind) == row.kind


@pytest.fixture
def chinese(qapp):  # noqa: ANN001
    """Simplified Chinese installed like the app does at start; English again afterwards."""
    from desktop.ui.app import apply_language
    from desktop.ui.look import format as fmt
    from desktop.ui.look import translation

    assert apply_language(qapp, "zh_CN") == "zh_CN"
    yield
    translation.install(qapp, "en", None)
    fmt.use_locale(",", ".", "%")


async def _until(predicate, timeout: float = 60.0) -> None:  # noqa: ANN001
    """Wait for ``predicate``; the deadline only stops a hang (2 cores shared by many test runs can take a while)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "condition not reached in time"
        await asyncio.sleep(0.02)


@pytest.mark.qt
async def test_no_english_is_left_in_the_window_the_settings_and_the_hover_card(
    chinese, qtbot, fake_api, tmp_path
):
    from PySide6.QtWidgets import QDialogButtonBox

    from desktop.ui.api import StoredMessage
    from desktop.ui.bridge import Bridge
    from desktop.ui.window.main_window import MainWindow
    from tests.conftest import _open_engine
    from tests.fakeapi import Fault

    async with _open_engine(credentials=False) as engine:
        bridge = Bridge(engine)
        win = MainWindow(bridge, engine.paths.config_dir / "window.ini")
        win.resize(1100, 760)
        win.show()
        try:
            await win.start()
            # The SDK is imported once, lazily, by the first send: seconds of CPU (up to ~10 s on a loaded machine)
            # that belong to no step of this test. Loaded first, so the waits below time the window only.
            from desktop.engine import lazy_imports

            await lazy_imports.load(lazy_imports.SDK)
            # A real turn (the gauge and its card from the API's usage), then a failed one (the banner).
            fake_api.queue_text("你好，我能帮你做什么？")
            win.composer.edit.setPlainText("你好")
            win.composer.send_button.click()
            await _until(lambda: win.gauge.snapshot() is not None and win.gauge.snapshot().source == "api")
            await _until(lambda: win.composer.send_button.isVisible())
            fake_api.queue_fault(Fault.custom(401, "authentication_error", "密钥无效"))
            win.composer.edit.setPlainText("再来一次")
            win.composer.send_button.click()
            await _until(lambda: win.banner.isVisible())
            assert win.banner.label.text() == "服务商拒绝了 API 密钥（401）：密钥无效。请在设置中检查密钥。"
            # What the transcript can hold besides prose: tool cards with states, an error, an interruption,
            # a cut reply, a thinking line, an image, a compaction card with its links.
            sid = win.session_id
            model = win.chat_model
            model.append_message(
                StoredMessage(
                    9001,
                    sid,
                    "assistant",
                    [
                        {"type": "thinking", "thinking": ""},
                        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "说明.txt"}},
                        {"type": "tool_use", "id": "t2", "name": "grep", "input": {"pattern": "待办"}},
                    ],
                )
            )
            model.append_message(
                StoredMessage(
                    9002,
                    sid,
                    "user",
                    [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "第一行\n第二行\n第三行"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "t2",
                            "is_error": True,
                            "content": [
                                {"type": "text", "text": "没有匹配"},
                                {"type": "image", "source": {}},
                            ],
                        },
                    ],
                )
            )
            model.set_tool_state("t1", "ok", 0.01)
            model.set_tool_state("t2", "asking")
            model.append_message(
                StoredMessage(
                    9003, sid, "assistant", [{"type": "text", "text": "部分回复"}], status="interrupted"
                )
            )
            model.append_message(
                StoredMessage(
                    9004,
                    sid,
                    "assistant",
                    [{"type": "text", "text": "出错的回复"}],
                    status="error",
                    meta={"error": "服务商当前负载过高，请稍后重试。"},
                )
            )
            model.append_message(
                StoredMessage(
                    9005,
                    sid,
                    "user",
                    [{"type": "image", "source": {}}, {"type": "text", "text": "看看这张图"}],
                )
            )
            model.append_message(
                StoredMessage(
                    9006,
                    sid,
                    "assistant",
                    [{"type": "text", "text": "被截断的回复"}],
                    meta={"stop_reason": "max_tokens"},
                )
            )
            model.set_trimmed({9002})
            key = model.add_compaction_card("摘要正文", 12, 31_234, 9001)
            model.set_card_detail(key, undoable=True, record_id=1, originals_shown=True)
            win.tools.workspace.show_folder(str(tmp_path / "工作区"))
            from desktop.tools.permissions import PermissionRequest
            from desktop.tools.types import BUILTIN, ToolSpec

            win.tools.prompt.ask(
                PermissionRequest(
                    sid,
                    "t3",
                    ToolSpec("write", BUILTIN, "write", {}),
                    {"file_path": "说明.txt", "content": "你好"},
                )
            )
            await _until(lambda: win.composer.send_button.isVisible())
            win.composer.edit.setPlainText("/context")  # the report card, worded line by line
            win.composer.send_button.click()
            await _until(lambda: any(model.row_at(i).kind == "notice" for i in range(model.rowCount())))

            texts = [*_widget_texts(win), *_chat_texts(win)]
            import keyring.backends.fail

            keyring.set_keyring(keyring.backends.fail.Keyring())  # the settings say why no key can be saved
            settings = win.open_settings()
            await _until(
                lambda: settings.isVisible() and settings.form.keyring_note.isVisible()
            )  # asked off the UI thread
            texts += _widget_texts(settings)
            buttons = settings.findChild(QDialogButtonBox)
            assert {b.text() for b in buttons.buttons()} == {"保存(&S)", "取消(&C)"} or {
                b.text() for b in buttons.buttons()
            } == {"保存", "取消"}  # qtbase's own translation
            settings.close()
            win.gauge.card.open_from_keyboard()
            await _until(win.gauge.card.isVisible)
            texts += _widget_texts(win.gauge.card)
            texts.append(("gauge/description", win.gauge.description()))
            texts += _widget_texts(win.tools.open_mcp())

            data = {
                "read",
                "grep",
                "write",
                str(tmp_path / "工作区"),  # the tool names and the folder this test used
                str(engine.paths.config_dir),
            }  # where prices.json goes (Settings names it)
            left = {(where, text): bad for where, text in texts if text and (bad := english_left(text, data))}
            assert left == {}, "\n".join(f"{k}: {v}" for k, v in left.items())
            shown = " ".join(text for _w, text in texts)
            for expected in (
                "新建对话",
                "立即压缩",
                "上下文窗口",
                "服务商配置",
                "查看摘要",
                "复制消息",
                "已中断",
                "没有可用的系统密钥环",
                "来源         来自上一次 API 响应",
                "（内置）请求运行",
            ):
                assert expected in shown
        finally:
            await bridge.close()
            win.close()
            win.deleteLater()


@pytest.mark.qt
def test_numbers_follow_the_locale(chinese, qapp):  # noqa: ANN001
    from PySide6.QtCore import QLocale

    from desktop.ui.look import format as fmt
    from desktop.ui.look import translation

    assert QLocale().name() == "zh_CN"
    assert fmt.fmt_tokens_exact(31_234) == "31,234" and fmt.fmt_percent(15.649) == "15.6%"
    translation.install(qapp, "de_DE", None)  # a locale that groups with "." and has a decimal comma
    assert fmt.fmt_tokens_exact(31_234) == "31.234" and fmt.fmt_tokens(31_234) == "31,2K"
    assert fmt.fmt_cost(1234.5) == "$1.234,50"


# --- the CLI -----------------------------------------------------------------------------------------------


@pytest.fixture
def run_cli(fake_api, monkeypatch, capsys):  # noqa: ANN001
    """``precis ARGS`` in this process under a locale (LANG), returning (exit code, stdout, stderr)."""
    from desktop.cli import main as cli_main
    from desktop.cli import wording

    for name in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)

    def run(args: list[str], lang: str) -> tuple[int, str, str]:
        monkeypatch.setenv("LANG", lang)
        wording.reset()
        code = cli_main.main(args)
        out = capsys.readouterr()
        return code, out.out, out.err

    yield run
    wording.reset()


def test_the_cli_speaks_the_locale_and_its_json_stays_english(run_cli, fake_api, precis_home):  # noqa: ANN001
    fake_api.queue_text("好的")
    zh = "zh_CN.UTF-8"
    code, out, err = run_cli(["chat", "--new", "你好"], zh)
    assert code == 0 and out.strip() == "好的" and "precis: 对话 1" in err
    code, out, _ = run_cli(["context", "1"], zh)
    assert code == 0 and out.splitlines()[0].startswith("模型") and "来源         来自上一次 API 响应" in out
    assert english_left(out) == []
    data = json.loads(run_cli(["context", "1", "--json"], zh)[1])
    assert data["source"] == "api" and "used" in data  # keys and values as in English
    listing = run_cli(["sessions"], zh)[1]
    assert "条消息" in listing and "词元" in listing
    code, _, err = run_cli(["chat", "--retry", "x"], zh)
    assert code == 1 and err.strip() == "precis：错误：--retry 需要 --session ID"
    # English under an English locale, and when Settings says English whatever the locale.
    assert run_cli(["context", "1"], "en_US.UTF-8")[1].startswith("Model ")
    (precis_home / "config" / "settings.json").write_text('{"language": "en"}', "utf-8")
    assert run_cli(["context", "1"], zh)[1].startswith("Model ")


def test_the_committed_qm_is_what_lrelease_builds_from_the_ts(tmp_path):
    """The .qm is in the repository so a build without PySide6 (an isolated wheel build) still ships it; it
    must never lag its .ts (packaging/build_translations.py rebuilds it)."""
    built = tmp_path / "built.qm"
    lrelease = Path(sys.executable).parent / "pyside6-lrelease"
    subprocess.run([str(lrelease), "-silent", str(TS), "-qm", str(built)], check=True, capture_output=True)
    assert i18n.qm_file(i18n.CHINESE).read_bytes() == built.read_bytes()


@pytest.mark.qt
def test_without_a_qm_the_window_reads_the_ts(qapp, tmp_path):  # noqa: ANN001
    from PySide6.QtCore import QCoreApplication

    from desktop.ui.look import format as fmt
    from desktop.ui.look import translation

    try:
        installed = translation.install(
            qapp, "zh_CN", tmp_path / "missing.qm", catalog.load("zh_CN").translate
        )
        assert any(isinstance(t, translation.FallbackTranslator) for t in installed)
        assert QCoreApplication.translate("Composer", "Attach files") == "添加附件"
        assert QCoreApplication.translate("Composer", "no such source") == "no such source"
        assert QCoreApplication.translate("Sidebar", "%n message(s)", None, 3) == "3 条消息"
    finally:
        translation.install(qapp, "en", None)
        fmt.use_locale(",", ".", "%")
    assert QCoreApplication.translate("Composer", "Attach files") == "Attach files"


def test_the_sidebar_group_titles_are_chinese(chinese):  # noqa: ANN001
    """The titles are painted by the list's delegate, so the widget walk never reads them."""
    from desktop.ui.sidebar.session_groups import group_label

    labels = [group_label(k) for k in ("pinned", "today", "yesterday", "week", "month", "2026-09")]
    assert [w for label in labels for w in english_left(label)] == []
