"""fold.summarize against the rows it stands for: `reputation.row_sums` of every team row, and
how many team rows share any row's identity, counted the plain way (the oracle), on generated views."""

from __future__ import annotations

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
    "run": st.sampled_from(["r1", "r2"]), "finding": st.none() | st.just("f1"), "seq": st.integers(1, 5)})


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
