"""Each step records what its tool does, so that the Stop can check who wrote its change
(vacant/attribute/authorship.py): the tool's kind, the platform's canonical input (`intent`) for a
shell command or a file tool, and the directory it ran in. Driven through the real Claude hook
entry and the Codex platform's own calls."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from vacant.hook import call as hook
from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed, run_dir
from vacant.platforms.codex.platform import PLATFORM as CODEX
from vacant.record.recorder import Recorder
from vacant.store.run import RunView, Step

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    mark_installed(workspace)
    return workspace


def claude(root: Path, event: str, cwd: Path, **fields: object) -> None:
    payload = {"session_id": "s1", "cwd": str(cwd), "hook_event_name": event, "transcript_path": None, **fields}
    hook.run("claude", json.dumps(payload).encode(), {"CLAUDE_PROJECT_DIR": str(root)})
    signal.alarm(0)


def tool(root: Path, key: str, name: str, tool_input: dict, cwd: Path | None = None) -> None:
    for event, extra in (("PreToolUse", {}), ("PostToolUse", {"tool_response": {}})):
        claude(root, event, cwd or root, tool_name=name, tool_input=tool_input, tool_use_id=key, **extra)


def steps(root: Path) -> dict[str, Step]:
    return {step.key: step for step in RunView.load(run_dir(root, "s1")).ordered()}


def test_a_claude_step_records_its_kind_its_input_and_where_it_ran(root: Path) -> None:
    claude(root, "SessionStart", root, source="startup")
    tool(root, "t1", "Bash", {"command": "echo hi > out.txt"}, cwd=root / "sub")
    tool(root, "t2", "Bash", {"command": "npm run dev", "run_in_background": True})
    tool(root, "t3", "Write", {"file_path": str(root / "a.py"), "content": "A = 1\n"})
    tool(root, "t4", "Edit", {"file_path": str(root / "a.py"), "old_string": "1", "new_string": "2"})
    tool(root, "t5", "Read", {"file_path": str(root / "a.py")})
    got = steps(root)
    shell, background, write, edit, read = (got[f"main/t{n}"] for n in range(1, 6))
    assert (shell.kind, shell.intent, shell.cwd) == ("shell", {"command": "echo hi > out.txt"}, "sub")
    assert background.intent == {"command": "npm run dev", "background": True} and background.cwd == "."
    assert (write.kind, write.intent) == ("write", {"path": str(root / "a.py"), "content": "A = 1\n"})
    assert edit.kind == "edit" and edit.intent["edits"] == [{"old_string": "1", "new_string": "2", "replace_all": False}]
    assert (read.kind, read.intent) == ("read", None)  # a kind whose writes are not checked keeps no intent
    assert all(step.seconds is not None and step.seconds >= 0 for step in got.values())


def test_a_codex_shell_call_records_its_command_as_one_line(root: Path) -> None:
    recorder = Recorder(root, "s1", CODEX)
    recorder.handle(HookCall("session_start", "s1", root, source="startup"))
    kind, intent = CODEX.intent("shell", {"command": ["bash", "-lc", "sed -i s/a/b/ f.txt"]})
    for call in ("tool_pre", "tool_post"):
        recorder.handle(HookCall(call, "s1", root, tool="shell", key="c1", scope=None, cwd=str(root),
                                 tool_input={"command": ["bash", "-lc", "sed -i s/a/b/ f.txt"]}, tool_kind=kind,
                                 intent=intent, outcome="ok", exit_code=0))
    (step,) = RunView.load(recorder.log.run_dir).ordered()
    assert step.kind == "shell" and step.intent == {"command": "bash -lc 'sed -i s/a/b/ f.txt'"} and step.cwd == "."


def test_a_directory_outside_the_workspace_is_kept_absolute(root: Path, tmp_path: Path) -> None:
    claude(root, "SessionStart", root, source="startup")
    tool(root, "t1", "Bash", {"command": "ls"}, cwd=tmp_path)
    assert steps(root)["main/t1"].cwd == str(tmp_path.resolve())
