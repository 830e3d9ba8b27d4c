"""`vacant verify` and `vacant report` notice what the chain vouches for, edited behind vacant's
back: a saved report (its sha256 is chained by `report_saved`) and an object file (content-
addressed). The run is recorded by the real hook entry, Stop included; the control is the
untouched run, which verifies."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from vacant import hook
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
    (root / ".git").mkdir(parents=True)
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


@pytest.mark.parametrize("edit", [None, _edit_report, _edit_object])
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
