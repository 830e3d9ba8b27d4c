"""A replay sees what the check would see: each recorded state is checked at the workspace's own
path, behind the wall (vacant/core/sandbox.py), so a project that reaches its own sources by
absolute path (an editable install's `.pth`, a venv inside the workspace, PYTHONPATH naming the
workspace, an npm workspace package reached through a node_modules link by absolute path) imports
the state's sources, never the live workspace's.

Generated plants x layouts: a package `pkg` whose `value()` the check asserts; one step of a
generated history breaks it (by construction: the oracle), the others write harmless files; the
final state keeps it broken. In every layout the finding's flip step is the planted one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from step_histories import record_steps

from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]

GOOD = "def value():\n    return 1\n"
BAD = "def value():\n    return 2\n"
LAYOUTS = ("flat", "src-pythonpath", "src-editable-venv", "src-workspace-venv", "npm-workspace-link")
JS = {GOOD: "exports.value = () => 1;\n", BAD: "exports.value = () => 2;\n"}  # the npm layout's module
NODE_TEST = ("const assert = require('node:assert');\nconst test = require('node:test');\n"
             "test('value', () => assert.strictEqual(require('pkg').value(), 1));\n")


def make_venv(where: Path, sources: Path) -> Path:
    """A venv whose site-packages names `sources` in a .pth, as an editable install (compat mode) does."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    (site,) = (where / "lib").glob("python3*/site-packages")
    (site / "_editable_pkg.pth").write_text(f"{sources}\n")
    return where / "bin" / "python"


def npm_workspace_link(root: Path) -> tuple[str, str]:
    """An npm workspace package, `packages/pkg`, reached through `node_modules/pkg`: a link by absolute
    path (as `npm link`, or an install that links a workspace package, makes; node_modules ignored, so
    the record leaves it out and the live one is shown over each state); node's test runner the guard."""
    (root / "packages" / "pkg").mkdir(parents=True)
    (root / "packages" / "pkg" / "package.json").write_text('{"name": "pkg", "main": "index.js"}\n')
    (root / "node_modules").mkdir()
    os.symlink(root / "packages" / "pkg", root / "node_modules" / "pkg")
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "test").mkdir()
    (root / "test" / "value.test.js").write_text(NODE_TEST)
    return "packages/pkg/index.js", "node --test test/"


def lay_out(root: Path, layout: str, outside: Path) -> tuple[str, str]:
    """The package's module (relative), and the check's command, as the project would set it up."""
    if layout == "npm-workspace-link":
        return npm_workspace_link(root)
    check = "import pkg, sys; sys.exit(0 if pkg.value() == 1 else 1)"
    if layout == "flat":
        return "pkg/__init__.py", f"{sys.executable} -c '{check}'"
    if layout == "src-pythonpath":
        return "src/pkg/__init__.py", f"PYTHONPATH={root / 'src'} {sys.executable} -c '{check}'"
    if layout == "src-editable-venv":
        python = make_venv(outside / "venv", root / "src")
        return "src/pkg/__init__.py", f"cd /; {python} -c '{check}'"  # from anywhere: only the .pth finds pkg
    python = make_venv(root / ".venv", root / "src")  # a venv inside the workspace, ignored
    (root / ".gitignore").write_text(".venv/\n")
    return "src/pkg/__init__.py", f"cd /; {root / '.venv' / 'bin' / 'python'} -c '{check}'"


def play(base: Path, layout: str, steps: int, plant: int) -> dict:
    root, outside = base / "ws", base / "outside"
    root.mkdir()
    outside.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    module, command = lay_out(root, layout, outside)
    text = JS if module.endswith(".js") else {GOOD: GOOD, BAD: BAD}
    (root / module).parent.mkdir(parents=True, exist_ok=True)
    (root / module).write_text(text[GOOD])
    (root / "vacant.toml").write_text(f'[[check]]\nname = "value"\ncommand = "{command}"\n')
    history = [{f"notes/{number}.txt": f"note {number}\n"} for number in range(steps)]
    history[plant] = {module: text[BAD]}
    run_dir = record_steps(root, history)
    return Pipeline(root, run_dir, load_contract(root), budget_s=600).run()


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_planted_step_is_found_in_every_layout(tmp_path_factory, layout, data):
    steps = data.draw(st.integers(min_value=1, max_value=6), "steps")
    plant = data.draw(st.integers(min_value=0, max_value=steps - 1), "plant")
    report = play(tmp_path_factory.mktemp(layout), layout, steps, plant)
    (finding,) = report["findings"]
    assert finding["flip_step"] == plant + 1, (layout, finding["evidence"])
    assert finding["level"] == "provable", finding


def test_a_replay_never_writes_the_live_workspace(tmp_path):
    """The live workspace's unrecorded paths are shown read-only over a state: a check that writes
    into them leaves the live ones as they were."""
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("live\n")
    (root / "a.txt").write_text("ok\n")
    command = "echo replayed > build/out.txt; grep -q ok a.txt"
    (root / "vacant.toml").write_text(f'[[check]]\nname = "a"\ncommand = "{command}"\n')
    run_dir = record_steps(root, [{"a.txt": "bad\n"}])
    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    assert (root / "build" / "out.txt").read_text() == "live\n"
    assert [f["flip_step"] for f in report["findings"]] == [1]
    assert os.listdir(root / "build") == ["out.txt"]


def test_a_replay_that_is_not_faithful_says_so_and_never_clears_the_agent(tmp_path):
    """The guard reads what no replay shows (here a bytecode cache directory, never brought over a
    state): every rebuilt state is red while the workspace is green. The report says the replay is
    not faithful, grades nothing on it, and the agent is never told the failure predates its work."""
    from vacant.attribute.stop import feedback_text

    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / ".gitignore").write_text("__pycache__/\n")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "marker").write_text("x")
    (root / "vacant.toml").write_text('[[guard]]\nname = "cache"\ncommand = "test -e __pycache__/marker"\n')
    report = Pipeline(root, record_steps(root, [{"a.txt": "a\n"}]), load_contract(root), budget_s=600).run()
    (finding,) = report["findings"]
    assert report["faithful"]["faithful"] is False and "cache" in report["faithful"]["why"]
    assert finding["level"] == "heuristic" and finding["evidence"]["method"] == "unfaithful"
    assert "already failing" not in feedback_text([finding], 1, 3, frozenset({"cache"}))


def test_a_faithful_replay_of_a_failure_present_at_the_baseline_says_so(tmp_path):
    """The control: the guard really fails from the start (live and rebuilt agree): faithful, and the
    agent is told it was already failing."""
    from vacant.attribute.stop import feedback_text

    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "vacant.toml").write_text('[[guard]]\nname = "cache"\ncommand = "test -e missing.txt"\n')
    report = Pipeline(root, record_steps(root, [{"a.txt": "a\n"}]), load_contract(root), budget_s=600).run()
    (finding,) = report["findings"]
    assert report["faithful"] == {"faithful": True, "why": None}
    assert finding["evidence"]["method"] == "baseline"
    assert "already failing" in feedback_text([finding], 1, 3, frozenset({"cache"}))


def probed_guard_then_the_outside_changes(tmp_path: Path, touch_after_probe: bool) -> dict:
    """A guard added by the person's `contract add` (its probe passed) that reads a file outside the
    workspace; the file then changes, so every state, the live one too, is red."""
    import time

    from vacant.policy.contract.red_first import add_check

    root, flag = tmp_path / "ws", tmp_path / "outside" / "flag"
    root.mkdir()
    flag.parent.mkdir()
    flag.write_text("ok\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "a.txt").write_text("a\n")
    add_check(root, "outside", f"grep -q ok {flag}", guard=True)
    if touch_after_probe:  # the workspace changed after the probe: its red baseline may be real
        time.sleep(1.1)
        (root / "b.txt").write_text("b\n")
    flag.write_text("bad\n")
    return Pipeline(root, record_steps(root, [{"a.txt": "a2\n"}]), load_contract(root), budget_s=600).run()


def test_a_rebuilt_baseline_that_fails_where_the_probe_passed_is_not_faithful(tmp_path):
    """Issue 45: the rebuilt baseline must answer as the probe did. The person's probe at `contract
    add` saw the guard pass and no recorded file changed since, yet the rebuilt baseline fails: the
    check reads something outside the record. Live and rebuilt final states agree (both red), so only
    the probe can tell; nothing is graded, and the agent is never told the failure predates its work."""
    from vacant.attribute.stop import feedback_text

    report = probed_guard_then_the_outside_changes(tmp_path, touch_after_probe=False)
    (finding,) = report["findings"]
    assert report["faithful"]["faithful"] is False and "probe" in report["faithful"]["why"], report["faithful"]
    assert finding["level"] == "heuristic" and finding["evidence"]["method"] == "unfaithful"
    assert "already failing" not in feedback_text([finding], 1, 3, frozenset({"outside"}))


def test_a_probe_older_than_the_workspace_does_not_speak_for_the_baseline(tmp_path):
    """The control: a recorded file changed after the probe, so the baseline is not the state the
    probe saw; the red baseline stands (faithful, graded `baseline`)."""
    report = probed_guard_then_the_outside_changes(tmp_path, touch_after_probe=True)
    (finding,) = report["findings"]
    assert report["faithful"] == {"faithful": True, "why": None}
    assert finding["evidence"]["method"] == "baseline"
