"""Vacuous checks are probed on the run's baseline, not on whatever the workspace is now."""

from __future__ import annotations

from pathlib import Path

from vacant.attribute import baseline_probe as probe
from vacant.core.calls import HookCall
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder

TOML = """task_family = "x"

[[check]]
name = "already-green"
command = "test -f given.txt"

[[check]]
name = "real-work"
command = "test -f result.txt"
"""


def test_probe_uses_the_baseline(tmp_path: Path):
    (tmp_path / "vacant.toml").write_text(TOML)
    (tmp_path / "given.txt").write_text("x")
    recorder = Recorder(tmp_path, "s1", PLATFORM)
    recorder.handle(HookCall("session_start", "s1", tmp_path, source="startup"))
    (tmp_path / "result.txt").write_text("done early")  # the agent already at work
    assert probe.probe(tmp_path, recorder.log.run_dir) == ["already-green"]
    assert probe.read(recorder.log.run_dir) == ["already-green"]
    assert (tmp_path / "result.txt").read_text() == "done early"  # the live workspace untouched


def test_a_run_started_by_a_hook_call_is_probed_in_the_background(tmp_path: Path, monkeypatch):
    """The hook call hands the recorder the probe's start (the attribute layer owns the probe):
    a session start in a workspace with a contract leaves the probe's verdict, found on the
    baseline though the work is done by the time the detached probe reads anything."""
    import json
    import time

    from vacant.hook import call as hookcall
    from vacant.core.locations import mark_installed, run_dir

    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    (root / "vacant.toml").write_text(TOML)
    (root / "given.txt").write_text("x")
    body = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(root)}
    assert hookcall.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(root)}) == ("", 0)
    (root / "result.txt").write_text("done early")
    run = run_dir(root, "s1")
    deadline = time.monotonic() + 60
    while probe.result(run) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert probe.result(run) == ["already-green"]
