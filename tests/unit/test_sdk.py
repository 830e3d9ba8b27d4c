"""vacant.sdk: the Claude Agent SDK's hook matchers (the real `claude_agent_sdk` types, from the
locked test extras). Every event the Claude CLI's install hooks is matched; a pre-tool call vacant
fails on or cannot decide in time is denied, in the SDK's shape; any other event fails open; a
command hook's printed answer becomes the SDK's dict; vacant's import never loads the SDK."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import anyio
import pytest
from claude_agent_sdk import HookMatcher

import vacant.sdk as sdk
from vacant.core.trustenv import BUDGET_ENV
from vacant.platforms.all_platforms import load

PRE = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/nowhere", "tool_name": "Bash",
       "tool_input": {"command": "git push"}, "tool_use_id": "toolu_1"}
POST = {**PRE, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "", "stderr": ""}}


def callback(event: str, workspace=None):
    [matcher] = sdk.hooks(workspace=workspace)[event]
    [answer] = matcher.hooks
    return answer


def call(event: str, payload: dict, workspace=None) -> dict:
    return anyio.run(callback(event, workspace), payload, payload.get("tool_use_id"), {"signal": None})


def test_every_event_the_cli_install_hooks_has_a_matcher_with_its_timeout():
    claude = load("claude")
    matchers = sdk.hooks()
    installed = claude.hooks_block("vacant-hook claude")  # what `vacant init --platform claude` writes
    assert set(matchers) == set(installed)
    for event, [matcher] in matchers.items():
        assert isinstance(matcher, HookMatcher) and matcher.matcher is None and len(matcher.hooks) == 1
        assert matcher.timeout == installed[event][0]["hooks"][0].get("timeout", matcher.timeout)
        assert claude.parse({"hook_event_name": event}, {}).kind != "ignore"


def test_a_pre_tool_call_vacant_fails_on_is_denied_any_other_event_fails_open(monkeypatch, tmp_path):
    def broken(self, raw, env):
        raise RuntimeError("the recorder broke")

    monkeypatch.setattr(sdk.Answerer, "run", broken)
    denied = call("PreToolUse", {**PRE, "cwd": str(tmp_path)})
    decision = denied["hookSpecificOutput"]
    assert (decision["hookEventName"], decision["permissionDecision"]) == ("PreToolUse", "deny")
    assert "RuntimeError: the recorder broke" in decision["permissionDecisionReason"]
    assert call("PostToolUse", {**POST, "cwd": str(tmp_path)}) == {}


def test_a_pre_tool_call_not_decided_in_time_is_denied(monkeypatch, tmp_path):
    def slow(self, raw, env):
        time.sleep(2)
        return "", 0

    monkeypatch.setattr(sdk.Answerer, "run", slow)
    monkeypatch.setenv(BUDGET_ENV, "0.2")
    started = time.monotonic()
    denied = call("PreToolUse", {**PRE, "cwd": str(tmp_path)})
    assert time.monotonic() - started < 1.5
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_workspace_is_the_given_one_else_the_sessions_first_cwd(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(sdk.Answerer, "run", lambda self, raw, env: (seen.append(env[sdk.PROJECT_DIR_ENV]), ("", 0))[1])
    answer = callback("PreToolUse")
    for cwd in ("/first", "/after/cd"):
        anyio.run(answer, {**PRE, "cwd": cwd}, "toolu_1", {"signal": None})
    call("PreToolUse", {**PRE, "cwd": "/elsewhere"}, workspace=tmp_path)
    assert seen == ["/first", "/first", str(tmp_path.resolve())]


@pytest.mark.parametrize(("printed", "returned"), [
    ("", {}),
    ('{"decision": "block", "reason": "fix it"}', {"decision": "block", "reason": "fix it"}),
    ('{"continue": false, "stopReason": "x", "systemMessage": "m"}',
     {"continue_": False, "stopReason": "x", "systemMessage": "m"}),
])
def test_a_printed_answer_is_the_sdks_dict(printed, returned):
    assert sdk.sdk_output(printed) == returned


def test_an_uninstalled_workspace_gets_no_opinion_and_nothing_is_created(tmp_path):
    assert call("PreToolUse", {**PRE, "cwd": str(tmp_path)}) == {}
    assert list(tmp_path.iterdir()) == []


def test_importing_vacant_sdk_does_not_load_the_sdk():
    code = "import sys, vacant.sdk; print(json.dumps(sorted(m for m in sys.modules if m.startswith('claude_agent_sdk'))))"
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
