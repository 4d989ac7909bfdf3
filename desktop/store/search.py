"""The full-text index over every chat: message text, tool input and results, thinking, and summaries.

Two FTS5 tables (schema v10; attached text files read since v11), kept in step by triggers, so every write path
(a reply, a stream's final commit, an import, a delete, a truncate, a cleared history, a deleted chat) updates
them in the same transaction:
``message_fts`` (rowid = message id) and ``compaction_fts`` (rowid = compaction id). A row still streaming is
indexed when it settles (complete, interrupted, error), not on every progressive commit.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from desktop.engine.history.search import MARK_END, MARK_START, RecallHit, SearchHit
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


def _text_of(content: str) -> str:
    """SQL: the searchable text of a ``messages.content`` JSON value (blocks of any kind; bad JSON: nothing).
    One pass over the blocks: an import writes tens of thousands of rows through this."""
    doc = f"(CASE WHEN json_valid({content}) THEN {content} ELSE '[]' END)"
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


def create_index(db: Database) -> None:
    """The tables, their triggers and a backfill from the rows already stored (one migration step)."""
    db.execute_sql(f"CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5(body, tokenize='{TOKENIZER}')")
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
    db.execute_sql(
        f"INSERT INTO message_fts (rowid, body) SELECT m.id, coalesce({_text_of('m.content')}, '') "
        "FROM messages AS m"
    )
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


def message_triggers(db: Database) -> None:
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS message_fts_insert AFTER INSERT ON messages BEGIN "
        f"INSERT INTO message_fts (rowid, body) VALUES (NEW.id, coalesce({_text_of('NEW.content')}, '')); END"
    )
    db.execute_sql(
        "CREATE TRIGGER IF NOT EXISTS message_fts_update AFTER UPDATE OF content, status ON messages "
        "WHEN NEW.status != 'streaming' BEGIN "
        "DELETE FROM message_fts WHERE rowid = OLD.id; "
        f"INSERT INTO message_fts (rowid, body) VALUES (NEW.id, coalesce({_text_of('NEW.content')}, '')); END"
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
    db.execute_sql(
        f"INSERT INTO message_fts (rowid, body) SELECT m.id, coalesce({_text_of('m.content')}, '') "
        "FROM messages AS m WHERE instr(m.content, '\"document\"') > 0"
    )


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
        (*marks, expr, limit, expr),
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
# question's glue would still pull in every message that has it).
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
        "we",
        "i",
        "you",
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "our",
        "my",
        "your",
        "me",
        "us",
        "about",
        "from",
        "at",
        "by",
        "as",
        "any",
        "some",
    ]
)
_SUFFIXES = ("ations", "ation", "ions", "ing", "ion", "ed", "es", "s")


def _stem(word: str) -> str:
    """A light English stem, searched as a prefix: "decisions" finds "decision" and "decided" ("decid*")."""
    low = word.casefold()
    for suffix in _SUFFIXES:
        if low.endswith(suffix) and len(low) - len(suffix) >= 4:
            low = low[: -len(suffix)]
            break
    return low[:-1] if len(low) > 5 and low.endswith("e") else low


_RECALL_TERM = re.compile(r"\w+")
# A question's words that ask for a decision or a reason, and the words such an answer is written with.
_ASKS = {
    "why": ("because",),
    "reason": ("because",),
    "decision": ("decided",),
    "decisions": ("decided",),
    "choice": ("chose", "decided"),
    "chosen": ("chose", "decided"),
    "choose": ("chose", "decided"),
}


def recall_expression(query: str) -> str:
    """A question or a few words as an FTS5 query: any word may match (bm25 ranks the messages with more and
    rarer ones first), each word as a quoted prefix of its stem, and as itself when that differs (so the exact
    word counts twice and ranks first), so no character of the query is FTS syntax."""
    asked = _RECALL_TERM.findall(query)
    words = [w for w in asked if w.casefold() not in _GLUE]
    words += [extra for w in asked for extra in _ASKS.get(w.casefold(), ())]
    terms: dict[str, None] = {}
    for word in words:
        stem = _stem(word)
        terms['"' + stem.replace('"', '""') + '"*'] = None
        if stem != word.casefold():
            terms['"' + word.casefold().replace('"', '""') + '"'] = None
    return " OR ".join(terms)


RECALL_TOOL = "recall"


def recall(repo: Repo, session_id: int, query: str, limit: int = 10) -> list[RecallHit]:
    """The messages of one chat (its active path, settled rows) that match ``query``, best first (bm25).
    Recall's own calls and results are left out: they only repeat the question or copies of other rows."""
    expr = recall_expression(query)
    if not expr:
        return []
    limit = max(1, limit)
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
        "ELSE m.role END, snippet(message_fts, 0, '', '', '…', ?), bm25(message_fts), m.created_at, m.content "
        "FROM message_fts JOIN messages AS m ON m.id = message_fts.rowid "
        "WHERE message_fts MATCH ? AND m.session_id = ? AND m.off_path IS NULL AND m.status != 'streaming' "
        "ORDER BY bm25(message_fts), m.id LIMIT ?",
        (RECALL_SNIPPET_WORDS, expr, session_id, limit + 4 * len(own) + 4 if own else limit),
    ).fetchall()
    stems = [s.strip('"*') for s in expr.split(" OR ")]
    out = []
    for mid, role, snippet, rank, created, content in rows:
        if own and not _matches_besides(content, own, stems):
            continue
        out.append(RecallHit(mid, role, snippet or "", float(rank), created))
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
