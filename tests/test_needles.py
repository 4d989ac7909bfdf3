"""The needle benchmark's targets hold: after three compactions every user instruction and every ledger needle
(paths, error strings) is still in the next request."""

from __future__ import annotations

from tests.bench.bench_needles import LEDGER_KINDS, USER_KINDS, run


async def test_user_instructions_and_ledger_needles_survive_three_compactions(monkeypatch):
    costs: list = []
    table = await run(seeds=1, segment=24, window=200_000, costs=costs)
    for kind in USER_KINDS + LEDGER_KINDS:
        row = table[(kind, 3)]
        assert row["total"] and row["present"] == row["total"], (kind, dict(row))
    assert table[("constraint", 3)]["pins"] == table[("constraint", 3)]["total"]  # verbatim, not paraphrased
    assert table[("path", 3)]["ledger"] == table[("path", 3)]["total"]  # from the stored calls
    assert [c["k"] for c in costs] == [1, 2, 3] and all(c["route"] == "cached" and c["read"] for c in costs)
