"""The wall's seal is checked at the Post and the Stop too (issue 41): a rename of `.claude` in the
session's last tool call has no pre-tool call after it to deny, so the Post of that call and the
Stop say it to the person (their systemMessage) and the error log names it; a Post or Stop on an
intact seal says nothing of it."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from vacant.cli import main
from vacant.hook import call as hook

pytestmark = pytest.mark.usefixtures("isolated_home")

CHANGED = "the wall around this workspace was changed: .claude"


@pytest.fixture
def installed(ws: Path, capsys, monkeypatch) -> Path:
    (ws / ".git").mkdir(exist_ok=True)
    monkeypatch.chdir(ws)
    monkeypatch.setattr(sys, "argv", ["vacant", "init", "--platform", "claude", "--no-wall"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    capsys.readouterr()
    return ws


def send(ws: Path, event: str, **fields) -> dict:
    body = {"session_id": "s1", "cwd": str(ws), "hook_event_name": event, **fields}
    stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(ws)})
    assert code == 0
    return json.loads(stdout) if stdout else {}


def last_call(ws: Path, rename: bool) -> tuple[dict, dict]:
    """One Bash call (the session's last) whose command, when `rename`, moved .claude away and put
    a fresh settings file in its place; then the Stop. (the Post's answer, the Stop's answer)"""
    fields = {"tool_name": "Bash", "tool_input": {"command": "python3 -c '...'"}, "tool_use_id": f"t{uuid.uuid4().hex}"}
    assert "hookSpecificOutput" not in send(ws, "PreToolUse", **fields)
    if rename:  # what the command did, run by the agent's interpreter (the gate cannot read it)
        (ws / ".claude").rename(ws / "old")
        (ws / ".claude").mkdir()
        (ws / ".claude" / "settings.local.json").write_text("{}")
    post = send(ws, "PostToolUse", **fields, tool_response={"stdout": "", "stderr": ""})
    return post, send(ws, "Stop")


def test_a_rename_in_the_last_call_is_said_at_its_post_and_at_the_stop(installed):
    post, stop = last_call(installed, rename=True)
    assert CHANGED in post.get("systemMessage", ""), post
    assert CHANGED in stop.get("systemMessage", ""), stop


def test_an_intact_seal_is_not_mentioned(installed):
    post, stop = last_call(installed, rename=False)
    assert "the wall around this workspace" not in json.dumps(post) + json.dumps(stop)
