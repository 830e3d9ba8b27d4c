"""The recorder on generated runs: Write steps, shell steps, out-of-band changes, parallel steps,
denied calls and steps left open, driven through the Recorder with normalised hook calls.

The oracle is independent of the recorder: the workspace itself. Folding the recorded change
deltas onto the recorded baseline must give exactly what a fresh scan of the workspace gives;
step numbers are 1..N in start order with one end each; a Write step owns only its target.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.core.calls import BatchCall, HookCall
from vacant.core.locations import state_dir
from vacant.platforms.all_platforms import load
from vacant.record.recorder import Recorder
from vacant.store.run import RunView
from vacant.store.states import fold, load_manifest, read_manifest_of, store_for

pytestmark = pytest.mark.usefixtures("isolated_home")

NAMES = ["a.txt", "b.txt", "dir/c.txt", "dir/deep/d.txt"]
paths = st.sampled_from(NAMES)
texts = st.text(alphabet="xyz01\n", min_size=0, max_size=12)
ops = st.one_of(
    st.tuples(st.just("write_step"), paths, texts),
    st.tuples(st.just("shell_step"), st.lists(st.tuples(paths, st.one_of(texts, st.none())), max_size=3)),
    st.tuples(st.just("out_of_band"), paths, texts),
    st.tuples(st.just("parallel_writes"), paths, paths, texts),
    st.tuples(st.just("denied_patch"),),
    st.tuples(st.just("left_open"), paths, texts),
)


class Session:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.platform = load("claude")
        self.keys = 0
        self.write_steps: dict[str, str] = {}  # tool_use_id -> the one path it may write

    def call(self, kind: str, **fields) -> None:
        Recorder(self.root, "s1", self.platform).handle(HookCall(kind, "s1", self.root, **fields))

    def key(self) -> str:
        self.keys += 1
        return f"toolu_{self.keys:03d}"

    def apply(self, rel: str, text: str | None) -> None:
        path = self.root / rel
        if text is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def pre(self, key: str, tool: str, scope) -> None:
        self.call("tool_pre", tool=tool, key=key, scope=scope, tool_input={}, cwd=str(self.root))

    def post(self, key: str, tool: str, scope) -> None:
        self.call("tool_post", tool=tool, key=key, scope=scope, tool_input={}, outcome="ok", cwd=str(self.root))

    def write_step(self, rel: str, text: str) -> None:
        key, scope = self.key(), [str(self.root / rel)]
        self.write_steps[key] = rel
        self.pre(key, "Write", scope)
        self.apply(rel, text)
        self.post(key, "Write", scope)

    def shell_step(self, edits) -> None:
        key = self.key()
        self.pre(key, "Bash", None)
        for rel, text in edits:
            self.apply(rel, text)
        self.post(key, "Bash", None)

    def out_of_band(self, rel: str, text: str) -> None:
        self.apply(rel + ".oob", text)  # a path no Write step targets: only a full scan sees it

    def parallel_writes(self, first: str, second: str, text: str) -> None:
        k1, k2 = self.key(), self.key()
        self.write_steps[k1], self.write_steps[k2] = first, second
        self.pre(k1, "Write", [str(self.root / first)])
        self.pre(k2, "Write", [str(self.root / second)])
        self.apply(first, text)
        self.apply(second, text + "2")
        self.post(k2, "Write", [str(self.root / second)])
        self.post(k1, "Write", [str(self.root / first)])

    def denied_patch(self) -> None:
        key = self.key()
        self.call("tool_batch", batch=[BatchCall(key, "Edit", {}, "denied")], scope=[])

    def left_open(self, rel: str, text: str) -> None:
        key = self.key()
        self.pre(key, "Bash", None)  # killed: no Post ever comes; Stop closes it by its scan
        self.apply(rel, text)


def _content(manifest: dict) -> dict:
    return {rel: (entry[0], entry[3]) for rel, entry in manifest.items()}


def run_session(root: Path, plan: list[tuple]) -> RunView:
    session = Session(root)
    session.call("session_start", source="startup")
    for op in plan:
        getattr(session, op[0])(*op[1:])
    session.call("stop")
    session.call("session_end", reason="other")
    return session, RunView.load(next((state_dir(root) / "runs").iterdir()))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(ops, max_size=8), seed_files=st.dictionaries(paths, texts, max_size=3))
def test_recorded_deltas_rebuild_the_workspace_and_steps_are_well_formed(tmp_path, plan, seed_files):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        for rel, text in seed_files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        session, view = run_session(root, plan)
        start = view.of_type("run_start")[0]
        baseline = load_manifest(store_for(root), start["baseline"])
        assert _content(baseline) == _content({rel: e for rel, e in read_manifest_of_seed(seed_files, tmp_path).items()})
        deltas = [record for record in view.records if record["type"] == "change"]
        final = fold(baseline, deltas)[-1]
        assert _content(final) == _content(read_manifest_of(root))
        starts = [r["step"] for r in view.records if r["type"] == "step_start"]
        ends = [r["step"] for r in view.records if r["type"] == "step_end"]
        assert starts == list(range(1, len(starts) + 1))
        assert sorted(ends) == starts  # every step closed exactly once, dangling ones at Stop
        for step in view.ordered():
            if step.key.split("/")[-1] in session.write_steps and not step.open_at_start:
                owned = {rel for change in step.changes for rel in (*change["added"], *change["changed"],
                                                                     *change["removed"])}
                target = session.write_steps[step.key.split("/")[-1]]
                parents = {str(parent) for parent in Path(target).parents if str(parent) != "."}
                assert owned <= {target} | parents  # a Write creates its missing directories too
    finally:
        shutil.rmtree(root, ignore_errors=True)


def read_manifest_of_seed(seed_files: dict, tmp_path: Path) -> dict:
    """The seed alone, scanned in a directory of its own: what the baseline must hold."""
    seed = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        for rel, text in seed_files.items():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            (seed / rel).write_text(text)
        return read_manifest_of(seed)
    finally:
        shutil.rmtree(seed, ignore_errors=True)


def test_a_batch_closes_a_call_whose_post_was_lost_as_unknown_when_it_changed_files(ws):
    """Claude's PostToolBatch lists every call of the turn; one with a Pre but no Post was denied,
    unless its Post was lost (the daemon down for its http hook): a call whose scope changed ran."""
    session = Session(ws)
    session.call("session_start", source="startup")
    ran, denied = session.key(), session.key()
    session.pre(ran, "Write", [str(ws / "after.txt")])
    session.apply("after.txt", "after\n")
    session.pre(denied, "Write", [str(ws / "never.txt")])
    session.call("tool_batch", batch=[BatchCall(ran, "Write", {}, "File created successfully"),
                                      BatchCall(denied, "Write", {}, "permission to write was not granted")], scope=[])
    view = RunView.load(next((state_dir(ws) / "runs").iterdir()))
    first, second = view.ordered()
    assert (first.outcome, [sorted(c["added"]) for c in first.changes]) == ("unknown", [["after.txt"]])
    assert (second.outcome, second.changes) == ("not-run", [])


def test_a_denied_call_is_a_step_that_did_not_run(ws):
    session = Session(ws)
    session.call("session_start", source="startup")
    session.denied_patch()
    _, view = ws, RunView.load(next((state_dir(ws) / "runs").iterdir()))
    (step,) = view.ordered()
    assert step.outcome == "not-run" and step.changes == []


def test_the_gate_takes_the_state_directory_this_call_found_and_never_a_daemons(ws, monkeypatch):
    """The wall hides the workspace's state directory: a recorder that found it for this call lends
    it to the gate (no second lookup), equal to a fresh lookup's; one given a directory (the
    daemon's, found when it started) lends nothing, and the gate looks it up afresh."""
    from vacant.policy.gate import gate

    lent: list[object] = []
    classify = gate.classify
    monkeypatch.setattr(gate, "classify", lambda *args, **kwargs: lent.append(kwargs.get("state")) or
                        classify(*args, **kwargs))
    platform = load("claude")
    pre = {"tool": "Read", "key": "toolu_001", "scope": [], "tool_input": {"file_path": str(ws / "a.txt")},
           "cwd": str(ws)}
    Recorder(ws, "s1", platform).handle(HookCall("tool_pre", "s1", ws, **pre))
    Recorder(ws, "s1", platform, state=state_dir(ws)).handle(HookCall("tool_pre", "s1", ws, **{**pre, "key": "t2"}))
    assert lent == [state_dir(ws), None]
