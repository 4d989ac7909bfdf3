"""The full-text index over every chat: message text, tool input and results, thinking, and summaries.

Two FTS5 tables (schema v10; attached text files read since v11), kept in step by triggers, so every write path
(a reply, a stream's final commit, an import, a delete, a truncate, a cleared history, a deleted chat) updates
them in the same transaction:
``message_fts`` (rowid = message id) and ``compaction_fts`` (rowid = compaction id). A row still streaming is
indexed when it settles (complete, interrupted, error), not on every progressive commit.

Since v17 ``message_fts`` has two columns: ``body``, the row's own words (what the search across chats matches
and every snippet shows), and ``context``, what a tool result answers (its call, see ``_context_of``), which
recall searches too. Recall (the model's tool, ``precis recall``) turns a question or a few words into a ranked
OR of words, stems, identifiers and pairs (``recall_terms``) and weighs the rows (``recall``).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple, Protocol

from desktop.engine.history.search import MARK_END, MARK_START, RecallHit, SearchHit
from desktop.engine.lazy_re import LazyPattern
from desktop.engine.types import StoredMessage
from desktop.store.schema import Database, Models


class Repo(Protocol):
    """What the searches read of a ``desktop.store.repo.Repo`` (that module imports this one, through its
    migrations, so this one names only what it uses)."""

    @property
    def db(self) -> Database: ...
    @property
    def m(self) -> Models: ...
    def _message(self, row: Any) -> StoredMessage: ...


TOKENIZER = "unicode61 remove_diacritics 2"
# v17: two columns. ``body`` is the row's own text (what a person searches and a snippet shows); ``context`` is
# what the row answers or calls (see _context_of), searched by recall only.
MESSAGE_INDEX = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5(body, context, tokenize='{TOKENIZER}')"
)
CONTEXT_ARGUMENT_CHARS = 200  # a call's text arguments up to this length are its result's context


def _doc(content: str) -> str:
    return f"(CASE WHEN json_valid({content}) THEN {content} ELSE '[]' END)"


def _text_of(content: str) -> str:
    """SQL: the searchable text of a ``messages.content`` JSON value (blocks of any kind; bad JSON: nothing).
    One pass over the blocks: an import writes tens of thousands of rows through this."""
    doc = _doc(content)
    return (
        "(SELECT group_concat(t, char(10)) FROM (SELECT CASE json_extract(b.value, '$.type') "
        "WHEN 'text' THEN json_extract(b.value, '$.text') "
        "WHEN 'thinking' THEN json_extract(b.value, '$.thinking') "
        "WHEN 'tool_use' THEN json_extract(b.value, '$.input') "
        "WHEN 'tool_result' THEN CASE json_type(b.value, '$.content') "
        "WHEN 'text' THEN json_extract(b.value, '$.content') "
        "WHEN 'array' THEN (SELECT group_concat(json_extract(c.value, '$.text'), char(10)) "
        "FROM json_each(b.value, '$.content') AS c WHERE json_extract(c.value, '$.type') = 'text') END "
        # An attached text file (v11): its words are the chat's too.
        "WHEN 'document' THEN CASE json_extract(b.value, '$.source.type') "
        "WHEN 'text' THEN json_extract(b.value, '$.source.data') END "
        f"END AS t FROM json_each({doc}) AS b))"
    )


def _context_of(row: str) -> str:
    """SQL: the ``context`` of a ``messages`` row (``row``: NEW in a trigger, an alias in a backfill), v17.

    A tool result says what came out (``22.036s``, ``10 tests, 0 failures``, a path); what was asked is in the call,
    in the assistant's row before it (``go test -tags=integration``, "Run SubagentLive tests", "Let me add a debug
    print"). A question names the asking as often as the answer, so a result is indexed with what its call asked:
    the call's tool name, its text arguments up to CONTEXT_ARGUMENT_CHARS (a command, a path, a description; not
    a file's content or an edit, which would make every result as long as its call) and the text of the row that
    made the call (what the assistant said it was doing); and with "error" when the result is an error
    (``is_error``: the words of a failure are often only the tool's, "Exit code 1"). A result that holds nothing
    takes no context. A row of calls holds their tool names (its body holds only their input). The call is looked
    for in the chat's nearest earlier assistant row, by its id: one indexed step back."""
    doc = _doc(f"{row}.content")
    calls = (
        "(SELECT CASE WHEN json_valid(p.content) THEN p.content ELSE '[]' END FROM messages AS p "
        f"WHERE p.session_id = {row}.session_id AND p.id < {row}.id AND p.role = 'assistant' "
        "ORDER BY p.id DESC LIMIT 1)"
    )
    # The ids of the calls this row answers with a result that holds something: an empty output takes no
    # context, it would only repeat its call's row.
    answered = (
        f"SELECT json_extract(r.value, '$.tool_use_id') FROM json_each({doc}) AS r "
        "WHERE json_extract(r.value, '$.type') = 'tool_result' AND CASE json_type(r.value, '$.content') "
        "WHEN 'text' THEN length(trim(json_extract(r.value, '$.content'), ' ' || char(9, 10, 13))) > 0 "
        "WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each(r.value, '$.content') AS c "
        "WHERE json_extract(c.value, '$.type') != 'text' "
        "OR length(trim(json_extract(c.value, '$.text'), ' ' || char(9, 10, 13))) > 0) ELSE 0 END"
    )
    arguments = (
        "(SELECT group_concat(a.value, char(10)) FROM json_each(u.value, '$.input') AS a "
        f"WHERE a.type = 'text' AND length(a.value) <= {CONTEXT_ARGUMENT_CHARS})"
    )
    return (
        f"(CASE WHEN instr({row}.content, '\"tool_') > 0 THEN (SELECT group_concat(w, char(10)) FROM ("
        f"SELECT json_extract(b.value, '$.name') AS w FROM json_each({doc}) AS b "
        "WHERE json_extract(b.value, '$.type') = 'tool_use' "
        f"UNION ALL SELECT 'error' FROM json_each({doc}) AS b "
        "WHERE json_extract(b.value, '$.type') = 'tool_result' AND json_extract(b.value, '$.is_error') "
        # One pass over the calling row: its text (what the assistant said it was doing) and the calls answered.
        "UNION ALL SELECT CASE json_extract(u.value, '$.type') WHEN 'text' THEN json_extract(u.value, '$.text') "
        f"ELSE json_extract(u.value, '$.name') || coalesce(char(10) || {arguments}, '') END "
        f"FROM json_each({calls}) AS u WHERE instr({row}.content, '\"tool_result\"') > 0 AND CASE "
        "json_extract(u.value, '$.type') "
        f"WHEN 'tool_use' THEN json_extract(u.value, '$.id') IN ({answered}) "
        # Its text only when one of its calls is answered here (then the nearest assistant row is the caller).
        f"WHEN 'text' THEN EXISTS (SELECT 1 FROM json_each({calls}) AS v "
        f"WHERE json_extract(v.value, '$.type') = 'tool_use' AND json_extract(v.value, '$.id') IN ({answered})) "
        "ELSE 0 END)) END)"
    )


def _row_values(row: str) -> str:
    """SQL: what the index holds of a ``messages`` row: rowid, body, context."""
    return f"{row}.id, coalesce({_text_of(f'{row}.content')}, ''), coalesce({_context_of(row)}, '')"


def _fill_messages(db: Database, where: str = "") -> None:
    db.execute_sql(
        f"INSERT INTO message_fts (rowid, body, context) SELECT {_row_values('m')} FROM messages AS m {where}"
    )


def create_index(db: Database) -> None:
    """The tables, their triggers and a backfill from the rows already stored (one migration step)."""
    db.execute_sql(MESSAGE_INDEX)
    db.execute_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS compaction_fts USING fts5(body, tokenize='{TOKENIZER}')"
    )
    message_triggers(db)
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS compaction_fts_insert AFTER INSERT ON compactions BEGIN "
        "INSERT INTO compaction_fts (rowid, body) VALUES (NEW.id, NEW.summary); END"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS compaction_fts_update AFTER UPDATE OF summary ON compactions BEGIN "
        "DELETE FROM compaction_fts WHERE rowid = OLD.id; "
        "INSERT INTO compaction_fts (rowid, body) VALUES (NEW.id, NEW.summary); END"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS compaction_fts_delete AFTER DELETE ON compactions BEGIN "
        "DELETE FROM compaction_fts WHERE rowid = OLD.id; END"
    )
    _fill_messages(db)
    db.execute_sql("INSERT INTO compaction_fts (rowid, body) SELECT id, summary FROM compactions")


def create_knowledge_index(db: Database) -> None:
    """v15: projects' knowledge, searchable by name and text (kept by triggers; knowledge is added or removed,
    never edited in place)."""
    db.execute_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS knowledge_fts USING fts5(name, body, tokenize='{TOKENIZER}')"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS knowledge_fts_insert AFTER INSERT ON project_knowledge BEGIN "
        "INSERT INTO knowledge_fts (rowid, name, body) VALUES (NEW.id, NEW.name, NEW.content); END"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS knowledge_fts_delete AFTER DELETE ON project_knowledge BEGIN "
        "DELETE FROM knowledge_fts WHERE rowid = OLD.id; END"
    )


MESSAGE_TRIGGERS = ("message_fts_insert", "message_fts_update", "message_fts_delete")


def message_triggers(db: Database) -> None:
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS message_fts_insert AFTER INSERT ON messages BEGIN "
        f"INSERT INTO message_fts (rowid, body, context) VALUES ({_row_values('NEW')}); END"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS message_fts_update AFTER UPDATE OF content, status ON messages "
        "WHEN NEW.status != 'streaming' BEGIN "
        "DELETE FROM message_fts WHERE rowid = OLD.id; "
        f"INSERT INTO message_fts (rowid, body, context) VALUES ({_row_values('NEW')}); END"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS message_fts_delete AFTER DELETE ON messages BEGIN "
        "DELETE FROM message_fts WHERE rowid = OLD.id; END"
    )


def index_attachments(db: Database) -> None:
    """v11: the message triggers again (they now read attached text files) and the rows holding a document
    indexed again; no other row changes."""
    db.execute_sql("DROP TRIGGER IF EXISTS message_fts_insert")
    db.execute_sql("DROP TRIGGER IF EXISTS message_fts_update")
    message_triggers(db)
    db.execute_sql(
        "DELETE FROM message_fts WHERE rowid IN (SELECT id FROM messages "
        "WHERE instr(content, '\"document\"') > 0)"
    )
    _fill_messages(db, "WHERE instr(m.content, '\"document\"') > 0")


def reindex_messages(db: Database) -> None:
    """v17: the message index made anew with its context column (see _context_of), its triggers again, and every
    stored row indexed again (the summaries' index is unchanged)."""
    for name in MESSAGE_TRIGGERS:
        db.execute_sql(f"DROP TRIGGER IF EXISTS {name}")
    db.execute_sql("DROP TABLE IF EXISTS message_fts")
    db.execute_sql(MESSAGE_INDEX)
    message_triggers(db)
    _fill_messages(db)


_TERM = re.compile(r"\S+")


def match_expression(query: str) -> str:
    """What a person typed as an FTS5 query: every word must occur (the last one as a prefix, so results come
    while typing); quotes make each word a plain string, so no character of the query is FTS syntax."""
    words = _TERM.findall(query)
    if not words:
        return ""
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


SNIPPET_WORDS = 12


def search(repo: Repo, query: str, limit: int = 50) -> list[SearchHit]:
    """Messages and summaries matching ``query``, newest first."""
    expr = match_expression(query)
    if not expr:
        return []
    db = repo.db
    marks = (MARK_START, MARK_END, "…", SNIPPET_WORDS)
    limit = max(1, limit)
    # Newest first: the newest `limit` rows of each table are chosen on the index alone (in rowid order, which
    # FTS5 walks without scoring every match); only those are joined and given a snippet, so a common word
    # costs about what a rare one does. (Ranking by bm25 scores every match: 130 ms for 10,000 matches.)
    rows = db.execute_sql(
        # A user row holding tool results is the tools' output, not something the person wrote.
        "SELECT 'message', m.session_id, s.title, m.id, NULL, "
        "CASE WHEN m.role = 'user' AND instr(m.content, '\"tool_result\"') > 0 THEN 'tool' ELSE m.role END, "
        "snippet(message_fts, 0, ?, ?, ?, ?), m.created_at "
        "FROM (SELECT rowid AS id FROM message_fts WHERE message_fts MATCH ? ORDER BY rowid DESC LIMIT ?) AS top "
        "CROSS JOIN message_fts ON message_fts.rowid = top.id JOIN messages AS m ON m.id = top.id "
        "JOIN sessions AS s ON s.id = m.session_id WHERE message_fts MATCH ?",
        # A row's own words only: its context (the call a result answers) would list every result of a command.
        (*marks, f"body : ({expr})", limit, f"body : ({expr})"),
    ).fetchall()
    rows += db.execute_sql(
        "SELECT 'summary', c.session_id, s.title, c.covers_through_message_id, c.id, 'summary', "
        "snippet(compaction_fts, 0, ?, ?, ?, ?), c.created_at "
        "FROM (SELECT rowid AS id FROM compaction_fts WHERE compaction_fts MATCH ? ORDER BY rowid DESC LIMIT ?) "
        "AS top CROSS JOIN compaction_fts ON compaction_fts.rowid = top.id JOIN compactions AS c ON c.id = top.id "
        "JOIN sessions AS s ON s.id = c.session_id WHERE compaction_fts MATCH ?",
        (*marks, expr, limit, expr),
    ).fetchall()
    found = {r[3] for r in rows if r[0] == "message"}
    rows += [r for r in _by_file_name(db, query, limit) if r[3] not in found]
    rows.sort(key=lambda r: -r[7])
    rows = rows[:limit]
    return [
        SearchHit(kind, sid, title, mid, cid, role, snippet or "", created)
        for kind, sid, title, mid, cid, role, snippet, created in rows
    ]


def _by_file_name(db: Database, query: str, limit: int) -> list[tuple[Any, ...]]:
    """Messages whose attached files' names (kept in the message's meta: image blocks carry none) hold every
    word of ``query``; the snippet is the names with the words marked. Not in the FTS index, so no migration:
    a scan of the rows that have attachments, which are few."""
    words = [w.casefold() for w in _TERM.findall(query)]
    if not words:
        return []
    out: list[tuple[Any, ...]] = []
    for sid, title, mid, created, names_json in db.execute_sql(
        "SELECT m.session_id, s.title, m.id, m.created_at, json_extract(m.meta, '$.files') "
        "FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.role = 'user' AND instr(m.meta, '\"files\"') > 0 AND json_valid(m.meta) "
        "AND json_type(m.meta, '$.files') = 'array' ORDER BY m.id DESC"
    ):
        try:
            names = [str(n) for n in json.loads(names_json)]
        except (TypeError, ValueError):
            continue
        joined = ", ".join(names)
        if all(w in joined.casefold() for w in words):
            out.append(("message", sid, title, mid, None, "user", _mark(joined, words), created))
            if len(out) >= limit:
                break
    return out


def _mark(text: str, words: list[str]) -> str:
    """``text`` with each occurrence of the (casefolded) words between the snippet marks."""
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    return pattern.sub(lambda m: f"{MARK_START}{m.group(0)}{MARK_END}", text)


# --- recall: one chat's own history, ranked (the model's `recall` tool and `precis recall`) ----------------------

RECALL_SNIPPET_WORDS = 24
# Words a question is made of that say nothing about what it asks for (bm25 weighs common words little, but a
# question's glue would still pull in every message that has it): articles, pronouns, auxiliaries, question words,
# and the words that place a question in the chat's past ("first", "again", "earlier"), which the messages asked
# about seldom hold.
_GLUE = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "has",
        "have",
        "had",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "how",
        "when",
        "where",
        "did",
        "do",
        "does",
        "done",
        "we",
        "i",
        "you",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "they",
        "them",
        "our",
        "my",
        "your",
        "me",
        "us",
        "he",
        "she",
        "his",
        "her",
        "about",
        "from",
        "at",
        "by",
        "as",
        "any",
        "some",
        "into",
        "than",
        "then",
        "so",
        "just",
        "also",
        "first",
        "last",
        "again",
        "earlier",
        "before",
        "ever",
        "once",
        # Light verbs and the nouns that frame what a question wants ("what number did it get").
        "get",
        "got",
        "use",
        "used",
        "number",
        "numbers",
        "name",
        "names",
    ]
)
# After "how", the word that frames the question ("how many", "how long"), not its subject.
_HOW = frozenset(["many", "much", "long", "often"])
# Suffixes taken off a word, the longest that leaves a stem of four letters or more; the stem is searched as a
# prefix, so "failures", "failure", "failed" and "failing" all find "fail…", "decisions" finds "decided".
_SUFFIXES = (
    "ations",
    "ation",
    "ments",
    "ment",
    "ures",
    "ions",
    "ings",
    "ing",
    "ies",
    "ied",
    "ure",
    "ion",
    "ed",
    "es",
    "ly",
    "s",
)


def _stem(word: str) -> str:
    """A light English stem, searched as a prefix: "decisions" finds "decision" and "decided" ("decid*"),
    "running" finds "run" (a doubled last consonant is undoubled)."""
    low = word.casefold()
    for suffix in _SUFFIXES:
        if low.endswith(suffix) and len(low) - len(suffix) >= 4:
            low = low[: -len(suffix)]
            if suffix in ("ing", "ings", "ed") and low[-1] == low[-2] and low[-1] not in "aeiouls":
                low = low[:-1]
            break
    return low[:-1] if len(low) > 5 and low.endswith("e") else low


# A question's words that ask for a decision, a reason or a failure, and the words such an answer is written with.
_ASKS = {
    "why": ("because",),
    "reason": ("because",),
    "decision": ("decided",),
    "decisions": ("decided",),
    "choice": ("chose", "decided"),
    "chosen": ("chose", "decided"),
    "choose": ("chose", "decided"),
    # A failure is reported as an error (and an error result is indexed with "error": see _context_of).
    "fail": ("error",),
    "fails": ("error",),
    "failed": ("error",),
    "failing": ("error",),
    "failure": ("error",),
    "failures": ("error",),
    "error": ("fail",),
    "errors": ("fail",),
}
# What the query is cut into: words, and identifiers whose words are joined by . / : - (paths, dotted names,
# kebab-case; snake_case is one \w run): "spotter-dov.1", "claude_code_log.parser", "docs/cache".
_CHUNK = LazyPattern(r"\w+(?:[./:-]\w+)*(?:['’]\w+)?")
# What the index's tokenizer (unicode61) makes of a chunk: its runs of letters and digits ("_" splits too).
_TOKEN = LazyPattern(r"[^\W_]+")

# One FTS5 phrase: its tokens, each (text, searched as a prefix).
Phrase = tuple[tuple[str, bool], ...]
PAIR_DISTANCE = 1  # tokens allowed between two words of a pair ("work on bead", "failed to start")


class Term(NamedTuple):
    """What one part of a recall query matches: a phrase, or two phrases near each other (``near`` tokens apart
    at most, in either order)."""

    phrases: tuple[Phrase, ...]
    near: int = 0

    def render(self) -> str:
        quoted = [
            " + ".join(
                '"' + text.replace('"', '""') + '"' + ("*" if prefix else "") for text, prefix in phrase
            )
            for phrase in self.phrases
        ]
        return f"NEAR({' '.join(quoted)}, {self.near})" if self.near else quoted[0]


def camel_parts(token: str) -> list[str]:
    """A camelCase or PascalCase token's words: "GetOrCreateEntireSessionID" -> Get, Or, Create, Entire, Session,
    ID; "HTTPServer" -> HTTP, Server; a token without an inner capital is itself."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(token)):
        before, here, after = token[i - 1], token[i], token[i + 1 : i + 2]
        if (before.islower() and here.isupper()) or (before.isupper() and here.isupper() and after.islower()):
            parts.append(token[start:i])
            start = i
    parts.append(token[start:])
    return parts


def _word(word: str) -> list[Term]:
    """One word: its stem as a prefix, and the word itself when that differs (so the exact word counts twice and
    ranks first). A word of one or two characters and a number are searched as they are: as prefixes they would
    match nearly anything ("pr" in "prompt", "1" in "10")."""
    low = word.casefold()
    if len(low) <= 2 or low.isdigit():
        return [Term((((low, False),),))]
    stem = _stem(low)
    return [Term((((stem, True),),))] + ([Term((((low, False),),))] if stem != low else [])


def _phrase(words: list[str]) -> Term:
    return Term((tuple((w.casefold(), False) for w in words),))


def _pair(words: list[str]) -> Term:
    """Two words of the question near each other in a message, each as _word searches it alone."""
    return Term(tuple(_word(w)[0].phrases[0] for w in words), PAIR_DISTANCE)


def _chunks(query: str) -> list[str]:
    """The query's chunks (_CHUNK), an English possessive or contraction taken off ("alice's" is alice, "what's" is
    what), a negation kept as "not" ("couldn't": could not)."""
    out: list[str] = []
    for chunk in _CHUNK.findall(query):
        head, _, tail = chunk.replace("’", "'").partition("'")
        out.append(head)
        if tail.casefold() == "t" and head.casefold().endswith("n"):
            out[-1] = {"can": "can", "won": "will"}.get(head.casefold(), head[:-1])
            out.append("not")
    return out


def recall_terms(query: str) -> list[Term]:
    """What recall searches for a question or a few words (each phrase may match; bm25 ranks the messages with
    more and rarer ones first):

    - each word that is not glue (_GLUE, a "how many"), by _word;
    - an identifier whole (as a phrase of its tokens, so "research-teammates.md" or "opentelemetry_phoenix" finds
      itself before its words apart; a camelCase token is one token of the index) and its words apart, by _word
      (so "claude_code_log.parser" also finds a "parser" said alone); a camelCase identifier also as the phrase of
      its words ("TranscriptComputers" finds transcript_computers.ex);
    - each two words next to each other in the question once glue is left out, as a pair that must stand at most
      PAIR_DISTANCE tokens apart, in either order: the messages that hold "not start", "plan mode" or "work on
      bead" together rank before those that hold the words apart;
    - the words an answer is written with, for a question about a reason, a decision or a failure (_ASKS)."""
    terms: dict[Term, None] = {}
    extra: list[str] = []
    run: list[str] = []  # the plain words since the last identifier, glue left out: for the pairs
    previous = ""
    for chunk in _chunks(query):
        tokens = _TOKEN.findall(chunk)
        low = chunk.casefold()
        extra += _ASKS.get(low, ())
        if not tokens:
            continue
        parts = [p for t in tokens for p in camel_parts(t)]
        if len(tokens) == 1 and len(parts) == 1 and tokens[0] == chunk:
            glue = low in _GLUE or (previous == "how" and low in _HOW)
            previous = low
            if glue:
                continue
            terms.update(dict.fromkeys(_word(chunk)))
            run.append(chunk)
            if len(run) > 1:
                terms[_pair(run[-2:])] = None
            continue
        previous = ""
        run = []
        if len(tokens) > 1:
            terms[_phrase(tokens)] = None
        for token in tokens:
            if len(camel_parts(token)) > 1:
                terms[_phrase([token])] = None
                terms[_phrase(camel_parts(token))] = None
        for part in parts:  # a lone letter ("t" of t.Parallel) is left to the whole's phrase
            if part.casefold() not in _GLUE and (len(part) > 1 or part.isdigit()):
                terms.update(dict.fromkeys(_word(part)))
    for word in extra:
        terms.update(dict.fromkeys(_word(word)))
    return list(terms)


def recall_expression(query: str) -> str:
    """A question or a few words as an FTS5 query: any of ``recall_terms`` may match; every token is quoted, so no
    character of the query is FTS syntax. Column-free, so it searches any index (projects' knowledge too)."""
    return " OR ".join(t.render() for t in recall_terms(query))


RECALL_TOOL = "recall"
# How recall ranks (bm25 is negative: lower is better; each factor multiplies it):
# - bm25's weight of each column: a row's own words 1, its context 2 (what a result answers: a question names the
#   asking, the command or the call's purpose, at least as often as the output);
RECALL_WEIGHTS = (1.0, 2.0)
# - what the person typed (a user row without tool results: instructions, decisions, facts given) counts half as
#   much again as a tool's output or a reply holding the same words;
RECALL_USER_BOOST = 1.5
# - a question about the first (or the last) of something weighs the row's place in the chat: the first row up to
#   half as much again, the last not at all (or the other way round).
RECALL_ORDER_BOOST = 0.5
_EARLIEST = frozenset(["first", "earliest", "initially", "originally", "initial", "original"])
_LATEST = frozenset(["last", "latest", "recently", "lately"])


def recall(repo: Repo, session_id: int, query: str, limit: int = 10) -> list[RecallHit]:
    """The messages of one chat (its active path, settled rows) that match ``query``, best first (bm25 over
    ``recall_terms``, weighed as above).
    Recall's own calls and results are left out: they only repeat the question or copies of other rows."""
    terms = recall_terms(query)
    if not terms:
        return []
    expr = " OR ".join(t.render() for t in terms)
    limit = max(1, limit)
    asked = {c.casefold() for c in _chunks(query)}
    order = 1 if asked & _EARLIEST else -1 if asked & _LATEST else 0
    # The chat's first and last ids: the row's place for the order, and a rowid range the index is read within
    # (it skips the other chats' rows outside it instead of joining every match of the whole history).
    first, last = repo.db.execute_sql(
        "SELECT coalesce(min(id), 0), coalesce(max(id), 0) FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    weighing = (
        *RECALL_WEIGHTS,
        RECALL_USER_BOOST,
        RECALL_ORDER_BOOST if order else 0.0,
        first if order > 0 else last,
        max(1, last - first),
    )
    own = {
        r[0]
        for r in repo.db.execute_sql(
            "SELECT json_extract(b.value, '$.id') FROM messages AS m, json_each(m.content) AS b "
            "WHERE m.session_id = ? AND m.role = 'assistant' AND instr(m.content, ?) > 0 "
            "AND json_extract(b.value, '$.type') = 'tool_use' AND json_extract(b.value, '$.name') = ?",
            (session_id, f'"name":"{RECALL_TOOL}"', RECALL_TOOL),
        ).fetchall()
    }
    rows = repo.db.execute_sql(
        "SELECT m.id, CASE WHEN m.role = 'user' AND instr(m.content, '\"tool_result\"') > 0 THEN 'tool' "
        "ELSE m.role END, snippet(message_fts, 0, '', '', '…', ?), bm25(message_fts, ?, ?) "
        "* CASE WHEN m.role = 'user' AND instr(m.content, '\"tool_result\"') = 0 THEN ? ELSE 1 END "
        "* (1 + ? * max(0.0, 1.0 - abs(m.id - ?) * 1.0 / ?)) AS score, m.created_at, m.content "
        "FROM message_fts JOIN messages AS m ON m.id = message_fts.rowid "
        "WHERE message_fts MATCH ? AND message_fts.rowid BETWEEN ? AND ? AND m.session_id = ? "
        "AND m.off_path IS NULL AND m.status != 'streaming' ORDER BY score, m.id LIMIT ?",
        (
            RECALL_SNIPPET_WORDS,
            *weighing,
            expr,
            first,
            last,
            session_id,
            limit + 4 * len(own) + 4 if own else limit,
        ),
    ).fetchall()
    words = [t.phrases[0][0][0] for t in terms]
    out = []
    for mid, role, snippet, score, created, content in rows:
        if own and not _matches_besides(content, own, words):
            continue
        out.append(RecallHit(mid, role, snippet or "", float(score), created))
    return out[:limit]


def _matches_besides(content: str, own: set[str], stems: list[str]) -> bool:
    """Whether a row still holds a searched word once recall's own calls and results are taken out of it."""
    try:
        blocks = json.loads(content)
    except ValueError:
        return False
    kept = [
        b
        for b in blocks
        if isinstance(b, dict)
        and not (
            (b.get("type") == "tool_use" and b.get("id") in own)
            or (b.get("type") == "tool_result" and b.get("tool_use_id") in own)
        )
    ]
    if len(kept) == len(blocks):
        return True
    text = json.dumps(kept, ensure_ascii=False).casefold()
    return any(stem in text for stem in stems)


def read(repo: Repo, session_id: int, ids: list[int]) -> list[StoredMessage]:
    """The messages of one chat with these ids, in id order (ids of another chat are not found)."""
    if not ids:
        return []
    M = repo.m.Message
    rows = M.select().where((M.session == session_id) & M.id.in_(sorted(set(ids)))).order_by(M.id)
    return [repo._message(r) for r in rows]


def read_range(repo: Repo, session_id: int, first: int, last: int, limit: int) -> list[StoredMessage]:
    """The chat's active-path messages with ids from ``first`` to ``last``, at most ``limit``, in id order."""
    M = repo.m.Message
    rows = (
        M.select()
        .where((M.session == session_id) & (M.id >= first) & (M.id <= last) & M.off_path.is_null())
        .order_by(M.id)
        .limit(max(1, limit))
    )
    return [repo._message(r) for r in rows]
