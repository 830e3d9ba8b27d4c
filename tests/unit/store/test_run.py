"""A recorded run read back (RunView) on generated event sequences: every step, change and read
lands where the log put it, and a model learnt later fills the actors that lacked it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vacant.store.run import RunView


def _start(n: int, agent: str | None = None) -> dict:
    return {"type": "step_start", "step": n, "key": f"{agent or 'main'}/t{n}", "tool": "Bash", "input": {},
            "actor": {"platform": "claude-code", "agent_definition": "main", "model": None, "task_family": "general"},
            "agent_id": agent, "scope": None, "open_steps": []}


events = st.lists(st.one_of(
    st.tuples(st.just("change"), st.one_of(st.none(), st.integers(1, 6)), st.sampled_from(["a", "b", "c"])),
    st.tuples(st.just("read"), st.integers(1, 6), st.sampled_from(["x", "y"])),
    st.tuples(st.just("end"), st.integers(1, 6), st.sampled_from(["ok", "failed", "not-run"])),
), max_size=25)


@given(n_steps=st.integers(0, 6), tail=events)
def test_every_record_lands_on_its_step_or_the_group(n_steps, tail):
    records = [_start(n) for n in range(1, n_steps + 1)]
    for kind, step, what in tail:
        if kind == "change":
            records.append({"type": "change", "step": step, "added": {what: ["f", 1, 0, "h", 0o644]},
                            "changed": {}, "removed": [], "scope": None, "open_steps": []})
        elif kind == "read":
            records.append({"type": "read", "step": step, "origin": "file", "ref": what})
        else:
            records.append({"type": "step_end", "step": step, "key": "k", "outcome": what})
    view = RunView.build(records)
    assert [step.number for step in view.ordered()] == list(range(1, n_steps + 1))
    for number, step in view.steps.items():
        assert step.changes == [r for r in records if r["type"] == "change" and r["step"] == number]
        assert step.reads == [r for r in records if r["type"] == "read" and r["step"] == number]
        ends = [r for r in records if r["type"] == "step_end" and r["step"] == number]
        assert step.outcome == (ends[-1]["outcome"] if ends else None)
    orphans = [r for r in records if r["type"] == "change" and (r["step"] is None or r["step"] > n_steps)]
    assert view.group_changes == orphans  # no known owner (several open, or its step unrecorded)


def test_a_model_learnt_after_the_step_started_fills_its_actor():
    records = [_start(1), _start(2, agent="sub1"), {"type": "actor", "agent_id": "main", "model": "m-1",
                                                    "agent_definition": "main"}]
    view = RunView.build(records)
    assert view.steps[1].actor["model"] == "m-1"
    assert view.steps[2].actor["model"] is None  # the sub-agent's model was never reported
    assert view.steps[1].changed_paths() == [] and not view.steps[1].out_of_band
