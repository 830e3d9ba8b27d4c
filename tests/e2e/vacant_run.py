"""Shared setup for e2e tests: a workspace with vacant's hooks really installed, a real agent
run against a scripted upstream, and the recorded run read back through `vacant log --json`."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from claude_harness import FakeUpstream, isolated_home, run_claude_p
from harness import RecordedRun, vacant


@dataclass
class ClaudeRun(RecordedRun):
    workspace: Path
    home: Path
    upstream: FakeUpstream
    process: subprocess.CompletedProcess


def make_workspace(tmp_path: Path, files: dict[str, str] | None = None, wall: bool = False) -> tuple[Path, Path]:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir(parents=True)
    home.mkdir(parents=True)
    for rel, text in (files or {}).items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    isolated_home(home, workspace)
    # a git workspace: vacant's state lives in .git/vacant, the same for every process of the test
    # whatever VACANT_HOME each one has (a non-git workspace keeps it under VACANT_HOME)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    env = dict(os.environ, HOME=str(home), VACANT_HOME=str(home / "vacant-data"))
    # unwalled unless asked: these tests exercise recording, the gate, scenarios...; the wall has its
    # own e2e (test_claude_wall.py), and a walled session costs about half again as long (CI time)
    vacant(["init", "--platform", "claude", *([] if wall else ["--no-wall"])], workspace, env=env)
    return workspace, home


def run_scripted(tmp_path: Path, turns: list[dict], files: dict[str, str] | None = None, prompt: str = "do the task",
                 extra_args: tuple[str, ...] = ()) -> ClaudeRun:
    workspace, home = make_workspace(tmp_path, files)
    upstream = FakeUpstream({"turns": turns}, tmp_path / "upstream")
    with upstream:
        process = run_claude_p(workspace, home, upstream, prompt, extra_args=extra_args)
    return ClaudeRun(workspace, home, upstream, process)
