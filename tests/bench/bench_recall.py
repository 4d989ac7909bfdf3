"""Recall: questions and keywords about facts early in real transcripts, asked after compaction.

``python -m tests.bench.bench_recall [--verbose] [--json] [--base REF] [--no-base]``

The question set is data (``tests/data/recall_questions.json``): facts from the early part of eight transcripts
of the corpus (paths, errors, decisions, numbers, names in listings), each asked as a question ("What was the
first test failure in the new combined transcript link tests?") and as keywords ("combined transcript link test
failure"), each with what the hit must hold (a substring of the answering message's text). It was written before
any ranking was looked at.

Each transcript is imported into a fresh store (the importer's plan, one transaction, as ``precis
import-claude-code`` does) and compacted: the transcript's own summary when it covers at least the first half,
else a compaction added over the first half. Every fact must lie in the compacted part (checked; a question whose
fact does not is reported and counts as missed). Every query goes through ``desktop.store.search.recall``, the
search the model's recall tool and ``precis recall`` use (the chat's own messages, bm25); a hit answers when its
message's text (``desktop.tools.recall.message_text``, what the tool reads back; casefolded, whitespace runs as
one space) holds one of the expected strings. Printed: recall@1 and recall@5 for questions and for keywords.

The file's ``held_out`` part (15 facts of three other transcripts, written after the rules were chosen on the
set) is measured the same way and printed apart; the target is the set's.

"before" is the same measure with the search of ``--base`` (default f24c5bd, main before issue 37 item 5: its
``desktop/store/search.py`` read with ``git show``, its index built on a store of this tree after this tree's
message index is dropped), "after" this tree's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.engine.history.claude_code import read_transcript
from desktop.engine.history.importer import plan_import
from desktop.store import search
from desktop.store.repo import Repo
from desktop.tools.recall import message_text
from tests.corpus import CORPUS, corpus_or_exit

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "tests" / "data" / "recall_questions.json"
BASE = "f24c5bd"  # main before issue 37 item 5
TOP = 5
TARGET = 0.90  # recall@5, for questions and keywords alike
FORMS = ("question", "keywords")


def load_questions(path: Path = QUESTIONS, part: str = "questions") -> list[dict[str, Any]]:
    """The question set (``part`` "questions"), or the held-out one ("held_out")."""
    data = json.loads(path.read_text(encoding="utf-8"))
    questions: list[dict[str, Any]] = data[part]
    return questions


def normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def answers(text: str, expect: Iterable[str]) -> bool:
    """Whether a message's text holds one of the expected strings (casefolded, whitespace runs as one space)."""
    body = normal(text)
    return any(normal(e) in body for e in expect)


@dataclass
class Chat:
    """One imported, compacted transcript: its session, the last compacted message, each message's text."""

    session_id: int
    through: int
    texts: dict[int, str] = field(default_factory=dict)

    def holds(self, expect: Iterable[str]) -> list[int]:
        """The compacted messages that hold the fact."""
        return [mid for mid, text in self.texts.items() if mid <= self.through and answers(text, expect)]


def import_chat(repo: Repo, transcript: Path) -> Chat:
    plan = plan_import(read_transcript(transcript))
    session, compaction = repo.import_session(plan)
    rows = repo.messages(session.id)
    half = rows[len(rows) // 2 - 1].id
    through = compaction.covers_through_message_id if compaction is not None else 0
    if through < half:
        repo.add_compaction(session.id, "(the first half, compacted for the benchmark)", half, "manual", {})
        through = half
    return Chat(session.id, through, {m.id: message_text(m) for m in rows})


def base_module(ref: str) -> types.ModuleType:
    """``desktop/store/search.py`` as it was at ``ref`` (read with ``git show``, nothing checked out)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:desktop/store/search.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType(f"search_at_{ref}")
    module.__file__ = f"{ref}:desktop/store/search.py"
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the repository's own file
    return module


def base_repo(path: Path, module: types.ModuleType) -> Repo:
    """A store of this tree whose message index is the one ``module`` makes (tables and triggers of this tree's
    message index dropped first; done on the empty store, before the import fills it)."""
    repo = Repo(path)
    db = repo.db
    for (name,) in db.execute_sql(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'message_fts%'"
    ).fetchall():
        db.execute_sql(f'DROP TRIGGER "{name}"')
    for (name,) in db.execute_sql(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'message%fts' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%'"
    ).fetchall():
        db.execute_sql(f'DROP TABLE "{name}"')
    module.create_index(db)
    return repo


@dataclass
class Outcome:
    entry: dict[str, Any]
    form: str
    rank: int | None  # 1-based rank of the first answering hit, None when none of the top answers
    where: list[int]  # compacted messages holding the fact
    top: list[int]  # message ids of the hits


def measure(
    make_repo: Callable[[Path], Repo],
    recall: Callable[..., list[Any]],
    questions: list[dict[str, Any]],
    folder: Path,
) -> tuple[list[Outcome], float]:
    """Every question in both forms against one search; the seconds the queries took."""
    by_transcript: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_transcript[q["transcript"]].append(q)
    outcomes: list[Outcome] = []
    spent = 0.0
    for n, (name, asked) in enumerate(sorted(by_transcript.items())):
        repo = make_repo(folder / f"{n}.db")
        try:
            chat = import_chat(repo, CORPUS / name)
            for q in asked:
                where = chat.holds(q["expect"])
                for form in FORMS:
                    start = time.perf_counter()
                    hits = recall(repo, chat.session_id, q[form], limit=TOP)
                    spent += time.perf_counter() - start
                    top = [h.message_id for h in hits]
                    rank = next(
                        (
                            i
                            for i, mid in enumerate(top, 1)
                            if mid in chat.texts and answers(chat.texts[mid], q["expect"])
                        ),
                        None,
                    )
                    outcomes.append(Outcome(q, form, rank if where else None, where, top))
        finally:
            repo.close()
    return outcomes, spent


def figures(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for form in FORMS:
        mine = [o for o in outcomes if o.form == form]
        out[form] = {
            "asked": len(mine),
            "at1": sum(o.rank == 1 for o in mine) / len(mine),
            "at5": sum(o.rank is not None for o in mine) / len(mine),
        }
    return out


def _line(label: str, f: dict[str, dict[str, float]]) -> str:
    q, k = f["question"], f["keywords"]
    return (
        f"{label:<36} {q['at1']:>7.0%} {q['at5']:>7.0%}   {k['at1']:>7.0%} {k['at5']:>7.0%}"
        f"   ({int(q['asked'])})"
    )


def _detail(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        mark = f"#{o.rank}" if o.rank else "--"
        place = "" if o.where else "  (fact not in the compacted part)"
        print(f"  {mark:>3} {o.form:<8} {o.entry[o.form]!r}  top {o.top}  fact in {o.where[:4]}{place}")


PARTS = {"questions": "the set", "held_out": "held out"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_recall", description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help=f"the commit measured as 'before' (default {BASE})")
    parser.add_argument("--no-base", action="store_true", help="measure this tree only")
    parser.add_argument("--verbose", action="store_true", help="every query, its rank and top hits")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    corpus_or_exit()
    parts = {part: load_questions(part=part) for part in PARTS}
    transcripts = {part: sorted({q["transcript"] for q in qs}) for part, qs in parts.items()}
    missing = sorted({t for ts in transcripts.values() for t in ts if not (CORPUS / t).is_file()})
    if missing:
        raise SystemExit(f"corpus at {CORPUS} lacks {', '.join(missing)}")
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        runs: list[tuple[str, Callable[[Path], Repo], Callable[..., list[Any]]]] = []
        if not args.no_base:
            try:
                module = base_module(args.base)
            except (OSError, subprocess.CalledProcessError) as exc:  # no git, or a clone without that commit
                print(f"before ({args.base}): not measured ({exc})", file=sys.stderr)
            else:
                runs.append((f"before ({args.base})", lambda p: base_repo(p, module), module.recall))
        runs.append(("after (this tree)", Repo, search.recall))
        for part, questions in parts.items():
            for i, (label, make_repo, recall) in enumerate(runs):
                folder = Path(tmp) / f"{part}-{i}"
                folder.mkdir()
                outcomes, spent = measure(make_repo, recall, questions, folder)
                key = f"{PARTS[part]}, {label}"
                results[key] = figures(outcomes)
                results[key]["time"] = {"ms_per_query": 1000 * spent / max(1, len(outcomes))}
                if args.verbose:
                    print(key)
                    _detail(outcomes)
                unplaced = sorted({o.entry["question"] for o in outcomes if not o.where})
                if unplaced:
                    print(f"{key}: facts not in the compacted part: {unplaced}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for part, questions in parts.items():
        print(
            f"{PARTS[part]}: {len(questions)} facts from {len(transcripts[part])} transcripts, each asked as a "
            f"question and as keywords"
        )
    print(f"recall through desktop.store.search.recall, top {TOP}")
    print(f"{'':<36} {'question':>16}   {'keywords':>16}")
    print(f"{'':<36} {'@1':>7} {'@5':>7}   {'@1':>7} {'@5':>7}")
    for label, f in results.items():
        print(_line(label, f) + f"  {f['time']['ms_per_query']:.1f} ms a query")
    after = results[f"{PARTS['questions']}, after (this tree)"]
    met = all(after[form]["at5"] >= TARGET for form in FORMS)
    print(
        f"target recall@5 >= {TARGET:.0%} for questions and keywords (the set): {'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
