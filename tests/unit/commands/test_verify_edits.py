"""`vacant verify` and `vacant report` notice what the chain vouches for, edited behind vacant's
back: a saved report (its sha256 is chained by `report_saved`) and an object file (content-
addressed), the run's small state (`run.json`, against the step log it caches). The run is recorded by the real hook entry, Stop included; the control is the
untouched run, which verifies."""

from __future__ import annotations

import subprocess

import json
import os
import sys
from pathlib import Path

import pytest

from vacant.hook import call as hook
from vacant.cli import main
from vacant.core.locations import list_runs, mark_installed, state_dir

pytestmark = pytest.mark.usefixtures("isolated_home")


def _send(root: Path, event: str, **fields) -> None:
    payload = {"session_id": "s1", "hook_event_name": event, "cwd": str(root),
               "transcript_path": str(root / "none.jsonl"), **fields}
    hook.run("claude", json.dumps(payload).encode(), dict(os.environ, CLAUDE_PROJECT_DIR=str(root)))


@pytest.fixture
def run(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # a real repository: git passes over an empty .git
    mark_installed(root)
    monkeypatch.chdir(root)
    _send(root, "SessionStart", source="startup")
    target = str(root / "a.txt")
    _send(root, "PreToolUse", tool_name="Write", tool_use_id="w1", tool_input={"file_path": target, "content": "hello\n"})
    Path(target).write_text("hello\n")
    _send(root, "PostToolUse", tool_name="Write", tool_use_id="w1", tool_input={"file_path": target, "content": "hello\n"},
          tool_response={"filePath": target})
    _send(root, "Stop", stop_hook_active=False)
    (found,) = list_runs(root)
    assert (found / "report.json").is_file()
    return found


def vacant(capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["vacant", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return done.value.code or 0, out, err


def _edit_report(run_dir: Path) -> None:
    report = json.loads((run_dir / "report.json").read_text())
    report["findings"] = []
    report["verdict"] = "green"
    (run_dir / "report.json").write_text(json.dumps(report, indent=1))


def _edit_object(run_dir: Path) -> None:
    objects = state_dir(Path.cwd()) / "objects"
    loose = [p for d in objects.iterdir() if d.is_dir() and len(d.name) == 2 for p in d.iterdir()]
    assert loose, "the run stored no loose object"
    loose[0].chmod(0o600)
    loose[0].write_bytes(loose[0].read_bytes() + b"forged\n")


def _edit_state(run_dir: Path) -> None:
    """Step numbers handed out again: the next step would share the Write's number."""
    state = json.loads((run_dir / "run.json").read_text())
    state["next_step"] = 1
    (run_dir / "run.json").write_text(json.dumps(state))


@pytest.mark.parametrize("edit", [None, _edit_report, _edit_object, _edit_state])
def test_verify_names_an_edited_report_or_object(run, capsys, monkeypatch, edit):
    if edit is not None:
        edit(run)
    code, out, _err = vacant(capsys, monkeypatch, "verify", run.name)
    if edit is None:
        assert code == 0 and "chain intact" in out, out
    else:
        assert code != 0 and "TAMPERED" in out and "chain intact (" not in out, out


def test_report_refuses_an_edited_report(run, capsys, monkeypatch):
    _edit_report(run)
    code, out, err = vacant(capsys, monkeypatch, "report", run.name)
    assert code != 0 and "edited" in (out + err)


# -- only hooks speak as hooks: the transcript cross-check at Stop ---------------------------------


def _transcript(path: Path, uses: list[str], failed: set[str]) -> None:
    lines = []
    for key in uses:
        lines.append({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": key, "name": "Bash", "input": {"command": "true"}}]}})
        lines.append({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": key, "content": "out", "is_error": key in failed}]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_forged_hook_calls_are_named_at_stop_and_by_verify(tmp_path, capsys, monkeypatch):
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # a real repository: git passes over an empty .git
    mark_installed(root)
    monkeypatch.chdir(root)
    transcript = root / "t.jsonl"
    _transcript(transcript, ["real", "failed-one"], {"failed-one"})

    def send(event: str, **fields) -> None:
        _send(root, event, transcript_path=str(transcript), **fields)

    send("SessionStart", source="startup")
    for key, outcome_ok in (("real", True), ("failed-one", True), ("invented", True)):
        bash = {"tool_name": "Bash", "tool_use_id": key, "tool_input": {"command": "true"}}
        send("PreToolUse", **bash)
        send("PostToolUse", **bash, tool_response={"stdout": "", "stderr": "", "interrupted": False})
    send("Stop", stop_hook_active=False)
    (run_dir,) = list_runs(root)
    report = json.loads((run_dir / "report.json").read_text())
    named = {(p["kind"], p["detail"].split(":")[0]) for p in report["record_problems"]}
    assert ("call-unheard", "step main/invented") in named
    assert ("close-forged", "step main/failed-one") in named
    assert not any("main/real" in p["detail"] for p in report["record_problems"])  # the control
    code, out, _err = vacant(capsys, monkeypatch, "verify", run_dir.name)
    assert code != 0 and "call-unheard" in out and "chain intact (" not in out, out


def test_forged_sub_agent_calls_are_named_against_their_own_transcript(tmp_path, capsys, monkeypatch):
    """A sub-agent's calls are judged by its own transcript (`<session>/subagents/agent-<id>.jsonl`);
    a sub-agent the session never spawned (no such file) has every call named; the real ones are not."""
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    monkeypatch.chdir(root)
    transcript = tmp_path / "project" / "s1.jsonl"
    transcript.parent.mkdir()
    _transcript(transcript, ["main-real"], set())
    (transcript.parent / "s1" / "subagents").mkdir(parents=True)
    _transcript(transcript.parent / "s1" / "subagents" / "agent-a1.jsonl", ["sub-real"], set())

    def send(event: str, **fields) -> None:
        _send(root, event, transcript_path=str(transcript), **fields)

    send("SessionStart", source="startup")
    for agent, key in ((None, "main-real"), ("a1", "sub-real"), ("a1", "sub-invented"), ("ghost", "ghost-call")):
        bash = {"tool_name": "Bash", "tool_use_id": key, "tool_input": {"command": "true"},
                **({"agent_id": agent, "agent_type": "general-purpose"} if agent else {})}
        send("PreToolUse", **bash)
        send("PostToolUse", **bash, tool_response={"stdout": "", "stderr": "", "interrupted": False})
    send("Stop", stop_hook_active=False)
    (run_dir,) = list_runs(root)
    report = json.loads((run_dir / "report.json").read_text())
    named = {(p["kind"], p["detail"].split(":")[0]) for p in report["record_problems"]}
    assert ("call-unheard", "step a1/sub-invented") in named
    assert ("call-unheard", "step ghost/ghost-call") in named
    assert not any("real" in p["detail"] for p in report["record_problems"])  # the controls
