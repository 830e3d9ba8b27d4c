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


def test_probe_uses_the_baseline(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(Recorder, "_probe_in_background", lambda self: None)  # run it in-process below
    (tmp_path / "vacant.toml").write_text(TOML)
    (tmp_path / "given.txt").write_text("x")
    recorder = Recorder(tmp_path, "s1", PLATFORM)
    recorder.handle(HookCall("session_start", "s1", tmp_path, source="startup"))
    (tmp_path / "result.txt").write_text("done early")  # the agent already at work
    assert probe.probe(tmp_path, recorder.log.run_dir) == ["already-green"]
    assert probe.read(recorder.log.run_dir) == ["already-green"]
    assert (tmp_path / "result.txt").read_text() == "done early"  # the live workspace untouched
