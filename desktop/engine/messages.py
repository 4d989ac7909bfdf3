"""What the engine says to people: typed messages with arguments, worded in English by default.

A ``Message`` is the English sentence (so the CLI, logs and tests read it as a plain ``str``) that also keeps
its template and arguments: the window words it again in the user's language through Qt Linguist (context
``Engine``), the CLI through ``desktop.i18n``. Templates are ``str.format`` strings; the constants below are
the message ids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

CONTEXT = "Engine"


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the name lupdate looks for
    """Marks ``text`` for lupdate without importing Qt."""
    return text


class Message(str):
    """An English sentence that remembers how it was made (``template`` and ``params``)."""

    template: str
    params: Mapping[str, Any]

    def __new__(cls, template: str, /, **params: Any) -> Message:
        self = super().__new__(cls, template.format(**params))
        self.template = template
        self.params = params
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles keep the template
        return (_rebuild, (self.template, dict(self.params)))


def _rebuild(template: str, params: dict[str, Any]) -> Message:
    return Message(template, **params)


def say(template: str, /, **params: Any) -> Message:
    return Message(template, **params)


def rewrite(text: str, clean: Callable[[str], str]) -> str:
    """``text`` with ``clean`` applied to what came from outside (a message's arguments, as text); a plain
    string is cleaned whole. Redaction goes through here so a worded message never repeats a secret."""
    if isinstance(text, Message):
        return Message(
            text.template,
            **{k: v if isinstance(v, int | float) else clean(str(v)) for k, v in text.params.items()},
        )
    if isinstance(text, Joined):
        return Joined(tuple(rewrite(part, clean) for part in text.parts))
    return clean(text)


def join(*parts: str) -> str:
    """Two sentences as one text; a view words each part (``Joined`` keeps them apart)."""
    return Joined(parts)


class Joined(str):
    """Sentences shown together ("Summary failed: …. Automatic summaries are paused …")."""

    parts: tuple[str, ...]

    def __new__(cls, parts: tuple[str, ...]) -> Joined:
        self = super().__new__(cls, " ".join(parts))
        self.parts = parts
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Joined, (self.parts,))


class Lines(str):
    """Lines shown one under the other (the /context report); a view words each line."""

    lines: tuple[str, ...]

    def __new__(cls, lines: tuple[str, ...]) -> Lines:
        self = super().__new__(cls, "\n".join(lines))
        self.lines = lines
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Lines, (self.lines,))


# --- turn errors (errors.py) -------------------------------------------------------------------------------
MEDIA_LIMIT = QT_TRANSLATE_NOOP("Engine", "Too many images or documents for this model: {raw}")
OVERFLOW = QT_TRANSLATE_NOOP("Engine", "The conversation no longer fits the model's context window ({raw}).")
AUTH_REJECTED = QT_TRANSLATE_NOOP(
    "Engine", "The provider rejected the API key ({status}): {text}. Check the key in Settings."
)
RATE_LIMITED = QT_TRANSLATE_NOOP("Engine", "Rate limited by the provider: {text}. Wait a moment and retry.")
OVERLOADED = QT_TRANSLATE_NOOP("Engine", "The provider is overloaded right now. Retry in a moment.")
SERVER_ERROR = QT_TRANSLATE_NOOP("Engine", "The provider had an internal error ({status}): {text}")
BAD_REQUEST = QT_TRANSLATE_NOOP("Engine", "The provider refused the request ({status}): {text}")
PROVIDER_ERROR = QT_TRANSLATE_NOOP("Engine", "Provider error ({status}): {text}")
TIMED_OUT = QT_TRANSLATE_NOOP("Engine", "The request timed out. Check the connection and retry.")
UNREACHABLE = QT_TRANSLATE_NOOP(
    "Engine", "Could not reach the provider. Check the base URL and your connection."
)
MALFORMED = QT_TRANSLATE_NOOP(
    "Engine", "The provider sent a malformed response. Retry; if it keeps happening, check the base URL."
)
DROPPED = QT_TRANSLATE_NOOP("Engine", "The connection dropped while receiving the reply ({name}).")
UNEXPECTED = QT_TRANSLATE_NOOP("Engine", "Unexpected error: {name}: {error}")
# A server that breaks the protocol (issue 35): one sentence each, bounded in time and in length.
NO_FIRST_BYTE = QT_TRANSLATE_NOOP(
    "Engine",
    "The provider sent no reply within {seconds} s of the request (at most keep-alive pings); your message is "
    "kept. Retry; a provider that is slow to start may need a longer first_byte_timeout in settings.json.",
)
STALLED = QT_TRANSLATE_NOOP(
    "Engine",
    "The provider stopped sending the reply for {seconds} s (at most keep-alive pings); what arrived is kept. "
    "Retry; a slow provider may need a longer idle_timeout in settings.json.",
)
PROVIDER_SENT = QT_TRANSLATE_NOOP(
    "Engine",
    "The provider sent {what}; your message is kept. Retry, and check the base URL if it keeps happening.",
)
SENT_JSON = QT_TRANSLATE_NOOP("Engine", "a JSON body where the reply's event stream was expected ({text})")
SENT_NOT_STREAM = QT_TRANSLATE_NOOP("Engine", "a {kind} page where the reply's event stream was expected")
SENT_NO_EVENTS = QT_TRANSLATE_NOOP("Engine", "a response with no reply events in it")
SENT_NOTHING = QT_TRANSLATE_NOOP("Engine", "a stream that ended before any of the reply")
SENT_BEFORE_START = QT_TRANSLATE_NOOP("Engine", "a {event} event before the reply had started")
SENT_UNKNOWN_BLOCK = QT_TRANSLATE_NOOP("Engine", "an event for a content block it never started")
SENT_BAD_UTF8 = QT_TRANSLATE_NOOP("Engine", "text that is not valid UTF-8")
SENT_BAD_JSON = QT_TRANSLATE_NOOP("Engine", "an event whose data is not valid JSON")
SENT_BAD_TOOL_INPUT = QT_TRANSLATE_NOOP("Engine", "a tool call whose input is not valid JSON")
SENT_UNREADABLE = QT_TRANSLATE_NOOP("Engine", "an event Précis cannot read")
SENT_UNFINISHED = QT_TRANSLATE_NOOP("Engine", "a reply whose stream ended before its end (no message_stop)")
REDIRECT_LOOP = QT_TRANSLATE_NOOP(
    "Engine", "The provider's address redirects in a loop (too many redirects); check the base URL."
)
HEADERS_TOO_LARGE = QT_TRANSLATE_NOOP(
    "Engine",
    "The provider sent response headers too large to read; check the base URL (a proxy may be answering).",
)
STREAM_CUT = QT_TRANSLATE_NOOP(
    "Engine",
    "The provider ended the stream before the reply was finished (no message_stop); what arrived is kept, "
    "marked cut: Continue asks the model to go on.",
)

# --- turns (chat.py) ---------------------------------------------------------------------------------------
COMPACT_WHILE_BUSY = QT_TRANSLATE_NOOP("Engine", "A reply is streaming: compact when it has finished.")
COMPACTION_STOPPED = QT_TRANSLATE_NOOP("Engine", "Compaction stopped; nothing changed.")
COMPACTED_ELSEWHERE = QT_TRANSLATE_NOOP(
    "Engine",
    "This chat was compacted elsewhere (another window or command) while this summary was being written; "
    "nothing was changed here. Compact again if it is still needed.",
)
UNDONE = QT_TRANSLATE_NOOP("Engine", "Compaction undone: the next request is built from the originals.")
UNDONE_EDIT = QT_TRANSLATE_NOOP("Engine", "Your edit was undone: the previous summary is in use again.")
UNDONE_TO_PREVIOUS = QT_TRANSLATE_NOOP("Engine", "Summary undone: the previous summary is in use again.")
STOPPED_REPEATING = QT_TRANSLATE_NOOP(
    "Engine",
    "Stopped after {rounds} tool rounds in a row that only repeated earlier calls with the same results; "
    "send a message to continue.",
)
STOPPED_CALLS = QT_TRANSLATE_NOOP(
    "Engine",
    "Stopped after {calls} model calls in one turn (the per-turn limit in Settings); send a message to "
    "continue.",
)
MEDIA_LEFT_OUT = QT_TRANSLATE_NOOP(
    "Engine", "Older images were left out to stay under the provider's media limit."
)
CUT_REPLY_GONE = QT_TRANSLATE_NOOP(
    "Engine", "The cut reply is no longer in the context; ask the model to go on instead."
)
NOT_SAVED = QT_TRANSLATE_NOOP(
    "Engine",
    "The reply could not be saved: {error} It is kept in memory: Retry saves it without asking the model "
    "again.",
)
REPLY_FILLED_WINDOW = QT_TRANSLATE_NOOP(
    "Engine",
    "The reply filled the context window and was cut short; the context will be compacted before the next"
    " turn.",
)
CONTEXT_TITLE = QT_TRANSLATE_NOOP("Engine", "Context")
TOO_LONG = QT_TRANSLATE_NOOP(
    "Engine",
    "This message is about {need:,} tokens, more than the {room:,} the model {model} can read (its "
    "context window less the room kept for the reply). Nothing was sent: shorten it or split it into "
    "parts.",
)
NOTHING_TO_CONTINUE = QT_TRANSLATE_NOOP("Engine", "nothing to continue: the newest reply was not cut short")

# --- compaction (compactor.py) -----------------------------------------------------------------------------
NOTHING_YET = QT_TRANSLATE_NOOP(
    "Engine", "Nothing to compact yet: everything is in the recent verbatim tail."
)
NOTHING_BEFORE = QT_TRANSLATE_NOOP("Engine", "Nothing to summarise before this message.")
SUMMARY_EDITED = QT_TRANSLATE_NOOP(
    "Engine", "Summary edited: the next request carries your text. Undo restores the previous summary."
)
NOT_SMALLER = QT_TRANSLATE_NOOP(
    "Engine", "The summary would not have made the context smaller; nothing was changed."
)
SUMMARY_FAILED = QT_TRANSLATE_NOOP("Engine", "Summary failed: {error}.")
# Why an automatic summary is made now or waits (compaction/schedule.py); figures in input-token equivalents.
SCHEDULE_PAYS = QT_TRANSLATE_NOOP(
    "Engine",
    "Summarised now: it frees about {gap:,} tokens, whose reads over about {turns} turns ({saving:,}) outweigh "
    "the summary and the re-write of the prompt it leaves ({cost:,}).",
)
SCHEDULE_WAITS = QT_TRANSLATE_NOOP(
    "Engine",
    "No summary yet: it would free about {gap:,} tokens, whose reads over about {turns} turns ({saving:,}) cost "
    "less than the summary and the re-write of the prompt it leaves ({cost:,}).",
)
SCHEDULE_LARGER = QT_TRANSLATE_NOOP(
    "Engine",
    "No summary: it would not make the context smaller ({used:,} tokens now, about {after:,} after).",
)
SCHEDULE_DUE = QT_TRANSLATE_NOOP(
    "Engine",
    "Summarised now: the context reached {used:,} tokens, near the end of the room, where a summary is made "
    "whether it pays or not.",
)
BREAKER_OPEN = QT_TRANSLATE_NOOP(
    "Engine", "Automatic summaries are paused after 3 failures; Compact now retries."
)
SUMMARIES_FAILING = QT_TRANSLATE_NOOP(
    "Engine",
    "Summaries are failing with {model}: the chat drops its oldest messages instead, in batches, and tries a "
    "summary again now and then.",
)
COMPACTED = QT_TRANSLATE_NOOP(
    "Engine", "Context compacted · {messages} messages summarised · ~{saved:,} tokens saved"
)
COMPACTED_ONE = QT_TRANSLATE_NOOP(
    "Engine", "Context compacted · 1 message summarised · ~{saved:,} tokens saved"
)
NOTHING_TO_DROP = QT_TRANSLATE_NOOP("Engine", "Nothing could be dropped: only the latest exchange is left.")
DROPPED_OLDEST = QT_TRANSLATE_NOOP(
    "Engine", "Dropped {count} oldest messages from the context (no summary available)."
)
DROPPED_OLDEST_ONE = QT_TRANSLATE_NOOP(
    "Engine", "Dropped the oldest message from the context (no summary available)."
)

# --- Test connection (probe.py) ----------------------------------------------------------------------------
NO_MODEL_LIST = QT_TRANSLATE_NOOP(
    "Engine", "The provider does not list its models (GET /v1/models did not answer); type the model's name."
)
MODELS_OFFERED = QT_TRANSLATE_NOOP("Engine", "Models offered: {count} ({shown}).")
MODELS_OFFERED_MORE = QT_TRANSLATE_NOOP("Engine", "Models offered: {count} ({shown} and {more} more).")
NO_MODELS = QT_TRANSLATE_NOOP("Engine", "The provider lists no models.")
CREDENTIALS_REFUSED = QT_TRANSLATE_NOOP("Engine", "The provider refused the credentials ({auth}): {error}")
TEST_FAILED = QT_TRANSLATE_NOOP("Engine", "The test message to {model} failed: {error}")
NO_KEY_NEEDED = QT_TRANSLATE_NOOP("Engine", "no key was needed")
KEY_ACCEPTED = QT_TRANSLATE_NOOP("Engine", "the {auth} was accepted")
CONNECTED = QT_TRANSLATE_NOOP(
    "Engine", "Connected: {model} answered a test message ({tokens_in} tokens in, {tokens_out} out); {how}."
)
WINDOW_FROM_PROVIDER = QT_TRANSLATE_NOOP(
    "Engine", "Context window of {model}: {window:,} tokens (from the provider)."
)
WINDOW_FROM_OVERRIDE = QT_TRANSLATE_NOOP(
    "Engine", "Context window of {model}: {window:,} tokens (from your override)."
)
WINDOW_FROM_CATALOG = QT_TRANSLATE_NOOP(
    "Engine", "Context window of {model}: {window:,} tokens (from the built-in catalog)."
)
WINDOW_UNKNOWN = QT_TRANSLATE_NOOP(
    "Engine",
    "The context window of {model} is unknown: set it below, or Précis learns it from the provider's "
    'first "too long" error.',
)
NOT_LISTED = QT_TRANSLATE_NOOP("Engine", "Note: {model} is not in the provider's list, but it answered.")

# --- the keyring (secrets.py) ------------------------------------------------------------------------------
NO_KEYRING = QT_TRANSLATE_NOOP(
    "Engine",
    "No system keyring is available (no Secret Service, Keychain or Credential Locker was found), so "
    "Précis cannot save the key in one. Keep it in a private file only you can read (mode 0600), or use it for "
    "this run only.",
)
NO_SAFE_KEYRING = QT_TRANSLATE_NOOP(
    "Engine",
    "No system keyring is available, so Précis cannot save the key safely. You can use it for this run only.",
)
KEYRING_REFUSED = QT_TRANSLATE_NOOP("Engine", "The system keyring refused the key: {error}")

# --- importing a Claude Code session (importer.py) and busy sessions (session_lock.py) ---------------------
IMPORTED = QT_TRANSLATE_NOOP("Engine", "imported {count} messages into session {session} ({title})")
SKIPPED_MALFORMED = QT_TRANSLATE_NOOP("Engine", "skipped {count} malformed lines")
SKIPPED_RECORDS = QT_TRANSLATE_NOOP("Engine", "skipped records: {reasons}")
IMPORTED_SUMMARY = QT_TRANSLATE_NOOP(
    "Engine", "compacted history kept as a summary (covers messages up to {through})"
)
IMPORT_NOT_REGULAR = QT_TRANSLATE_NOOP(
    "Engine", "{path} is not a regular file (a device, pipe or socket); import a .jsonl file"
)
IMPORT_NO_FILE = QT_TRANSLATE_NOOP("Engine", "no such file: {path}")
IMPORT_DIRECTORY = QT_TRANSLATE_NOOP("Engine", "{path} is a directory, not a .jsonl file")
IMPORT_UNREADABLE = QT_TRANSLATE_NOOP("Engine", "cannot read {path}: {error}")
IMPORT_NOT_TRANSCRIPT = QT_TRANSLATE_NOOP(
    "Engine", "{path} is not a Claude Code JSONL transcript ({count} lines are not JSON records)"
)
IMPORT_EMPTY = QT_TRANSLATE_NOOP("Engine", "{path} holds no conversation messages to import")
SESSION_BUSY = QT_TRANSLATE_NOOP(
    "Engine",
    "Chat {session} is busy: another Précis (process {pid}) is running a reply in it, and it did not "
    "finish within {waited} s; nothing was sent or saved. Try again when it is done.",
)
SESSION_BUSY_ELSEWHERE = QT_TRANSLATE_NOOP(
    "Engine",
    "Chat {session} is busy: another Précis (process {pid} on {host}) is running a reply in it, and it "
    "did not finish within {waited} s; nothing was sent or saved. Try again when it is done.",
)

# --- settings.json (settings.py): what Settings.load fixed or ignored ----------------------------------------
SETTINGS_UNREADABLE = QT_TRANSLATE_NOOP(
    "Engine", "settings.json could not be read ({error}); using the defaults"
)
SETTINGS_NOT_OBJECT = QT_TRANSLATE_NOOP(
    "Engine", "settings.json holds {kind}, not an object; using the defaults"
)
OUT_OF_RANGE = QT_TRANSLATE_NOOP("Engine", "{name}: {value} is outside {lo}..{hi}; using {fixed}")
NOT_A_WHOLE_NUMBER = QT_TRANSLATE_NOOP(
    "Engine", "{name}: expected a whole number, got {value}; using {default}"
)
ROUNDED = QT_TRANSLATE_NOOP("Engine", "{name}: {value} is not a whole number; using {fixed}")
NOT_A_NUMBER = QT_TRANSLATE_NOOP("Engine", "{name}: expected a number, got {value}; using {default}")
NOT_A_MODEL_ID = QT_TRANSLATE_NOOP("Engine", "{name}: expected a model id, got {value}; using the default")
NOT_TEXT = QT_TRANSLATE_NOOP("Engine", "{name}: expected text, got {value}; using the default")
NOT_A_BOOLEAN = QT_TRANSLATE_NOOP("Engine", "{name}: expected true or false, got {value}; using the default")
NOT_TEXT = QT_TRANSLATE_NOOP("Engine", "{name}: expected text, got {value}; using none")
NOT_A_LANGUAGE = QT_TRANSLATE_NOOP(
    "Engine", 'language: expected "", "en" or "zh_CN", got {value}; following the system'
)
PROFILE_WITHOUT_NAME = QT_TRANSLATE_NOOP("Engine", "profiles: an entry without a name was ignored")
OVERRIDES_NOT_OBJECT = QT_TRANSLATE_NOOP("Engine", "model_overrides: expected an object, got {kind}; ignored")
OVERRIDE_EMPTY_MODEL = QT_TRANSLATE_NOOP("Engine", "model_overrides: an empty model id; ignored")
OVERRIDE_NOT_OBJECT = QT_TRANSLATE_NOOP(
    "Engine", "{where}: expected an object or a window size, got {value}; ignored"
)
NOT_A_COUNT = QT_TRANSLATE_NOOP("Engine", "{where}: expected a positive whole number, got {value}; ignored")
NOT_A_PRICE = QT_TRANSLATE_NOOP("Engine", "{where}: expected a price of 0 or more, got {value}; ignored")
NOT_A_FAMILY = QT_TRANSLATE_NOOP("Engine", "{where}: expected {one} or {other}, got {value}; ignored")
UNKNOWN_KEY = QT_TRANSLATE_NOOP("Engine", "{where}: unknown key {key} ignored")

# --- storage failures (desktop/store/errors.py): one sentence each ------------------------------------------
DB_DAMAGED = QT_TRANSLATE_NOOP(
    "Engine",
    "The database {path} {what}; it was left untouched. To start fresh, move it aside (for example rename it to "
    "{name}.broken) and start Précis again; or put back a backup of it.",
)
DB_NOT_SQLITE = QT_TRANSLATE_NOOP("Engine", "is not an SQLite database (another program's file, or damaged)")
DB_CUT_SHORT = QT_TRANSLATE_NOOP("Engine", "is cut short ({size:,} of {expected:,} bytes)")
DB_IS_DAMAGED = QT_TRANSLATE_NOOP("Engine", "is damaged ({error})")
DB_LOCKED = QT_TRANSLATE_NOOP(
    "Engine",
    "The database {path} is locked by another program and stayed locked for {waited} s; close the other program "
    "(or another Précis) and try again.",
)
DB_READ_ONLY = QT_TRANSLATE_NOOP(
    "Engine",
    "The database {path} cannot be written (read-only disk or no permission); nothing was changed. Make the "
    "folder writable, or set PRECIS_HOME to another one.",
)
DISK_FULL = QT_TRANSLATE_NOOP(
    "Engine", "The disk holding {path} is full; nothing was changed. Free some space and try again."
)
PATH_READ_ONLY = QT_TRANSLATE_NOOP(
    "Engine",
    "{path} cannot be written (read-only disk or no permission); nothing was changed. Make it writable, or set "
    "PRECIS_HOME to another folder.",
)
PATH_IN_THE_WAY = QT_TRANSLATE_NOOP(
    "Engine",
    "{path} is in the way: Précis needs a folder there and found a file (or the other way round); it was left "
    "untouched. Move it, or set PRECIS_HOME to another folder.",
)
PATH_FAILED = QT_TRANSLATE_NOOP("Engine", "{path}: {error}; nothing was changed.")
DB_CANNOT_OPEN = QT_TRANSLATE_NOOP(
    "Engine",
    "The database {path} cannot be opened ({error}); it was left untouched. Check that its folder exists and is "
    "readable, or set PRECIS_HOME to another folder.",
)
DB_IO = QT_TRANSLATE_NOOP(
    "Engine",
    "The database {path} could not be written or read ({error}); nothing was lost that was saved before. Check "
    "the disk (space, errors) and try again.",
)
DB_LOCK_WAITING = QT_TRANSLATE_NOOP(
    "Engine",
    "The database {path} is locked by another program (perhaps another Précis); waiting up to {wait} s for it.",
)
FILE_SIZE_LIMIT = QT_TRANSLATE_NOOP(
    "Engine",
    "{path} could not be written: this process may not write files larger than {limit:,} bytes (the file size "
    "limit, ulimit -f); nothing was changed. Raise the limit and try again.",
)
DISK_IO = QT_TRANSLATE_NOOP(
    "Engine",
    "{path} could not be written or read: the disk reported an input/output error (the disk or its connection "
    "may be failing); nothing was changed. Check the disk and try again.",
)
INPUT_OUTPUT_ERROR = QT_TRANSLATE_NOOP("Engine", "the disk reported an input/output error")
FILE_TOO_LARGE_FOR_LIMIT = QT_TRANSLATE_NOOP("Engine", "the file size limit (ulimit -f) was reached")
DB_NUMBER_TOO_LARGE = QT_TRANSLATE_NOOP(
    "Engine", "A number too large for the database ({error}); nothing was changed."
)
DB_FAILED = QT_TRANSLATE_NOOP("Engine", "The database {path} failed: {name}: {error}")

# --- projects -------------------------------------------------------------------------------------------------
PROJECT_EXISTS = QT_TRANSLATE_NOOP("Engine", "A project named “{name}” exists already.")
PROJECT_NEEDS_NAME = QT_TRANSLATE_NOOP("Engine", "A project needs a name.")
PROJECT_UNKNOWN = QT_TRANSLATE_NOOP("Engine", "No project named “{name}”.")
PROJECT_TEXT_EMPTY = QT_TRANSLATE_NOOP("Engine", "Nothing to add: the text is empty.")
PROJECT_NO_KNOWLEDGE = QT_TRANSLATE_NOOP("Engine", "The project has no knowledge named “{name}”.")
