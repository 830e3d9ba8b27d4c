"""Feedback text and read coverage (the pipeline itself is proven end to end in tests/e2e)."""

from __future__ import annotations

from vacant.attribute.stop import feedback_text, read_coverage
from vacant.store.run import RunView


def finding(n: int, **extra) -> dict:
    base = {"id": f"id{n:010d}", "path": "config.py", "line": n, "source": "check", "name": "rate",
            "message": "RATE is 0.09, expected 0.08 " * 20, "level": "provable", "flip_step": 3, "step": 3,
            "tool": "Edit", "actor": {"platform": "claude-code", "model": "secret-model", "agent_definition": "checker"}}
    return {**base, **extra}


def test_feedback_has_at_most_twelve_lines_and_every_shown_id():
    items = [finding(n) for n in range(1, 25)]
    text = feedback_text(items, 1, 3)
    lines = text.splitlines()
    assert len(lines) <= 12
    assert "round 1 of 3" in lines[0]
    assert "and 15 more" in text
    assert all(f"[{item['id']}]" in text for item in items[:9])


def test_feedback_never_names_the_actor():
    text = feedback_text([finding(1), finding(2, source="flag", message="wrong figure")], 2, 3)
    for word in ("claude", "secret-model", "checker"):
        assert word not in text.lower()
    assert "config.py:1" in text and "step 3 (Edit)" in text and "flag: wrong figure" in text


def test_incomplete_and_hop_wording():
    text = feedback_text([finding(1, level="incomplete", path=None, line=None),
                          finding(2, level="lineage_internal", flip_step=5, step=2, tool="Agent")], 1, 3)
    assert "never passed" in text and "introduced at step 5, value from step 2 (Agent)" in text


def view(*records) -> RunView:
    return RunView.build([{"seq": n, **r} for n, r in enumerate(records, start=1)])


def step(n, tool, scope):
    return {"type": "step_start", "step": n, "key": f"k{n}", "tool": tool, "input": {}, "actor": {"m": 1},
            "open_steps": [], "scope": scope}


def test_read_coverage_states():
    start = {"type": "run_start", "source": "startup"}
    read = {"type": "read", "origin": "file", "ref": "a", "object": "x", "step": 1}
    assert read_coverage(view(start, step(1, "Read", []), read))["state"] == "complete"
    partial = read_coverage(view(start, step(1, "Read", []), read, step(2, "Bash", None)))
    assert partial["state"] == "partial" and "step 2" in partial["why"]
    assert read_coverage(view(start, step(1, "Write", ["a"])))["state"] == "none"
