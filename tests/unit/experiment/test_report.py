"""The summary as Markdown and as one self-contained HTML page (no script, nothing fetched)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.experiment.analysis import analyse
from vacant.experiment.report import html, markdown

PLAN = {"agent": "claude", "model": None, "tasks": [{"name": "t1"}, {"name": "t2"}], "arms": {"rl": "", "rf": "", "rs": ""},
        "repeats": 1, "rounds": 3, "primary_outcome": "success = accepted AND hidden pass"}


def records(outcomes: list[tuple[str, str, bool]]) -> list[dict]:
    return [{"cell": f"{t}/{a}/1", "task": t, "family": "programming" if t == "t1" else "general", "arm": a,
             "repeat": 1, "success": ok, "accepted": ok, "hidden": ok, "agent_runs": 2, "seconds": 3.0,
             "input_tokens": None, "output_tokens": None, "workspace": f"cells/{t}/{a}/1/attempt-1/ws", "runs": ["r1"]}
            for t, a, ok in outcomes]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=6, max_size=6))
def test_markdown_and_html_say_the_same_numbers_and_fetch_nothing(oks):
    recs = records([(t, a, ok) for (t, a), ok in zip([(t, a) for t in ("t1", "t2") for a in ("rs", "rf", "rl")], oks)])
    summary = analyse(recs, ["rs", "rf", "rl"], "abc123")
    text, page = markdown(summary, PLAN), html(summary, PLAN, recs)
    assert "Plan `abc123`" in text and "arms rs, rf, rl" in text
    for arm in ("rs", "rf", "rl"):
        wins = sum(1 for r in recs if r["arm"] == arm and r["success"])
        assert f"| all | {arm.upper()} | 2 | {wins} |" in text
    assert "<script" not in page and re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"] * 2
    assert page.count("<svg") == 2 and page.count('<a href="cells/') == 6
    assert "abc123" in page and "RL−RF" in page
