"""fold.summarize against the rows it stands for: `reputation.row_sums` of every team row, and
how many team rows share any row's identity, counted the plain way (the oracle), on generated views."""

from __future__ import annotations

import json

import pytest
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.share import fold
from vacant.share.signing import TeamKeys
from vacant.share.team import Counted, TeamView, review_key
from vacant.store import reputation

names = st.sampled_from(["claude-code", "codex", "main", "m-1", "t"])
bodies = st.fixed_dictionaries({
    "cell": st.fixed_dictionaries({"platform": names, "agent_definition": names, "model": names, "task_family": names}),
    "score": st.sampled_from([0.0, 1.0, 0.5, 1]), "weight": st.floats(0, 1000) | st.integers(0, 3),
    "run": st.sampled_from(["r1", "r2"]) | st.text(max_size=4), "finding": st.none() | st.just("f1") | st.text(max_size=4),
    "seq": st.integers(1, 5)})  # any text too: the sealed summary joins the row texts by newlines


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(items=st.lists(bodies, max_size=30), others=st.lists(bodies, max_size=5))
def test_the_summary_is_the_rows_sums_and_multiplicities(items, others):
    view = TeamView(TeamKeys({}, []))
    for n, body in enumerate(items):
        view.reviews[review_key(body)] = Counted(f"id{n}", "a" * 32, "o" * 40, body)
    rows = [fold.team_row(counted) for counted in view.reviews.values()]
    summary = fold.summarize(view)
    assert summary.sums == reputation.row_sums(rows)
    held = Counter(rows)  # a ReviewRow is its identity
    for row in rows + [fold.team_row(Counted("x", "a" * 32, "o" * 40, body)) for body in others]:
        assert summary.multiplicity(row) == held[row]
    assert summary.team == len(rows)
    again = fold.TeamSummary.from_json(summary.to_json())  # as sealed and read back
    assert again is not None and all(again.multiplicity(row) == held[row] for row in rows)


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(["r1", "r\n2", ""]) | st.text(max_size=3),
                                st.none() | st.sampled_from(["f\n", "f1"]) | st.text(max_size=3)), max_size=20))
def test_the_sealed_summary_reads_back_every_rows_multiplicity(pairs):
    """Many rows in one group (one cell, score and weight), any run and finding text: the summary
    as sealed (its group's texts joined in one string) and read back counts each row as before."""
    cell = {"platform": "p", "agent_definition": "main", "model": "m", "task_family": "t"}
    view = TeamView(TeamKeys({}, []))
    for n, (run, finding) in enumerate(pairs):
        body = {"cell": cell, "score": 1.0, "weight": 0.5, "run": run, "finding": finding, "seq": n + 1}
        view.reviews[review_key(body)] = Counted(f"id{n}", "a" * 32, "o" * 40, body)
    summary = fold.summarize(view)
    again = fold.TeamSummary.from_json(json.loads(json.dumps(summary.to_json())))
    assert again is not None and again.sums == summary.sums
    for counted in view.reviews.values():
        row = fold.team_row(counted)
        assert again.multiplicity(row) == summary.multiplicity(row) == Counter(pairs)[(row.run, row.finding)]
