"""fold.summarize against the rows it stands for: `reputation.row_sums` and `row_digest` of
every team row, made the plain way (the oracle), on generated views."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.share import fold
from vacant.share.signing import TeamKeys
from vacant.share.team import Counted, TeamView
from vacant.store import reputation

names = st.sampled_from(["claude-code", "codex", "main", "m-1", "t"])
bodies = st.fixed_dictionaries({
    "cell": st.fixed_dictionaries({"platform": names, "agent_definition": names, "model": names, "task_family": names}),
    "score": st.sampled_from([0.0, 1.0, 0.5, 1]), "weight": st.floats(0, 1000) | st.integers(0, 3),
    "run": st.sampled_from(["r1", "r2"]), "finding": st.none() | st.just("f1"), "seq": st.integers(1, 5)})


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(items=st.lists(bodies, max_size=30))
def test_the_summary_is_the_rows_sums_and_digests(items):
    view = TeamView(TeamKeys({}, []))
    for n, body in enumerate(items):
        view.reviews[f"id{n}"] = Counted(f"id{n}", "a" * 32, "o" * 40, body)
    rows = [fold.team_row(counted) for counted in view.reviews.values()]
    summary = fold.summarize(view)
    assert summary.sums == reputation.row_sums(rows)
    assert list(summary.digests) == sorted(fold.row_digest(row) for row in rows) and summary.team == len(rows)
