"""`run.json` (the run's small state) against the step log it caches: generated call sequences
through the real recorder (opened and closed steps, steps never closed, a Post with no Pre, the
same call twice, out-of-band changes, a hook killed between its log append and its state save)
never read as an edit; any edit of the state's step numbers does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.attribute.recordaudit import state_problems
from vacant.core.calls import HookCall
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder
from vacant.store.steplog import StepLog

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

OPS = st.lists(st.tuples(st.sampled_from(["pre", "post", "both", "oob", "again", "kill"]), st.integers(0, 4)),
               max_size=14)


def _play(root: Path, ops: list[tuple[str, int]]) -> Path:
    recorder = Recorder(root, "s", PLATFORM)
    recorder.handle(HookCall("session_start", "s", root, source="startup"))
    for n, (op, k) in enumerate(ops):
        key, target = f"toolu_{k}", root / f"f{k}.txt"
        call = dict(tool="Write", key=key, scope=[str(target)],
                    tool_input={"file_path": str(target), "content": f"{n}\n"})
        if op == "kill":  # a hook killed after its log append: the state on disk stays as it was
            saved = (recorder.log.run_dir / "run.json").read_bytes()
            Recorder(root, "s", PLATFORM).handle(HookCall("tool_pre", "s", root, **call))
            (recorder.log.run_dir / "run.json").write_bytes(saved)
            recorder = Recorder(root, "s", PLATFORM)
            continue
        if op in ("pre", "both", "again"):
            recorder.handle(HookCall("tool_pre", "s", root, **call))
        if op == "oob" or op in ("both", "again", "post"):
            target.write_text(f"{n}\n")
        if op in ("post", "both", "again"):
            recorder.handle(HookCall("tool_post", "s", root, outcome="ok", **call))
        if op == "again":
            recorder.handle(HookCall("tool_pre", "s", root, **call))
            recorder.handle(HookCall("tool_post", "s", root, outcome="ok", **call))
        recorder = Recorder(root, "s", PLATFORM)  # each hook call is its own process
    return recorder.log.run_dir


def _edits(state: dict) -> list[dict]:
    out = []
    for delta in (-1, 1, 5):
        if state["next_step"] + delta >= 1:
            out.append({**state, "next_step": state["next_step"] + delta})
    for key in state["open"]:
        out.append({**state, "open": {k: v for k, v in state["open"].items() if k != key}})
        out.append({**state, "open": {**state["open"], key: {**state["open"][key], "step": state["open"][key]["step"] + 1}}})
    for key in state["closed"]:
        if not key.startswith("oob-"):
            out.append({**state, "closed": {k: v for k, v in state["closed"].items() if k != key}})
    out.append({**state, "closed": {**state["closed"], "toolu_forged": 1}})
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_recorded_runs_agree_with_their_state_and_every_edit_is_named(tmp_path_factory, ops):
    root = tmp_path_factory.mktemp("ws")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    run_dir = _play(root, ops)
    assert state_problems(run_dir) == []
    path = run_dir / "run.json"
    original = path.read_bytes()
    head = StepLog(run_dir).read_head()
    if json.loads(original).get("log_seq") != head.seq:
        return  # a killed hook's lag: the next call folds the log's tail in (what an edit there changes, it undoes)
    for edited in _edits(json.loads(original)):
        path.write_text(json.dumps(edited))
        found = state_problems(run_dir)
        assert [p["kind"] for p in found] == ["state-edited"], edited
        path.write_bytes(original)
    path.write_bytes(b"{not json")
    assert state_problems(run_dir) == []  # unreadable: the recorder starts again from the log; not an edit
