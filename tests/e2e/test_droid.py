"""The real `droid` binary (droid 0.215.0, pinned) offline against the scripted Chat Completions fake
(fixtures/upstreams/fake_responses.py), through a BYOK model in the isolated ~/.factory/settings.json:
no Factory login.

Installed hooks (`vacant init --platform droid`), one run: a read, an ACT arm the gate holds before
it runs, the planted error, a failing check (Droid sends no PostToolUse for it: the transcript
closes its step), then Stop blocks with located feedback, which comes back as the next user message
in the same run, and the fix. Then `vacant do`: the same planted error, the next round a fresh
`droid exec` carrying the feedback (Droid's resume needs a login), green. `vacant uninstall`
leaves the settings file as it was, byte for byte. A missing binary fails this test, it never skips it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from chat_harness import text, tool, tool_result, vacant
from codex_harness import BIN, FakeResponses, git_workspace
from do_harness import CHECK, FEEDBACK, FILES, log_of, report, rounds, vacant_do
from harness import AGENTS_BIN, MARK, agent_binary, marks
from opencode_harness import chat_request_text

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e
MODEL = "fake-model"
THEIRS = '{\n  "theirs": true\n}\n'  # the person's project settings, kept byte for byte


def droid_env(home: Path, base_url: str, vacant_home: Path) -> dict:
    """An offline run: isolated HOME whose Droid settings name the fake as a BYOK model."""
    (home / ".factory").mkdir(parents=True, exist_ok=True)
    model = {"model": MODEL, "displayName": "Fake", "baseUrl": base_url, "apiKey": "sk-fake",
             "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}
    (home / ".factory" / "settings.json").write_text(json.dumps({"customModels": [model]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTORY", "DROID", "OPENAI", "CLAUDE"))}
    return {**env, "HOME": str(home), "VACANT_HOME": str(vacant_home), "NO_COLOR": "1",
            "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}"}


def droid_argv(prompt: str) -> list[str]:
    return [str(agent_binary("droid", "Factory Droid")), "exec", "--auto", "high", "-m", f"custom:{MODEL}", prompt]


def execute(command: str, match: str | None = None, call_id: str | None = None) -> dict:
    return tool("Execute", match, call_id, command=command, riskLevelReason="runs a command", riskLevel="low")


def test_installed_hooks_gate_feedback_in_the_same_run_and_do_rounds(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK, ".factory/settings.json": THEIRS}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("Read", file_path=str(workspace / "spec" / "rates.md")),
        execute("sh arms/mark.sh", call_id="call_mark"),  # ACT: held for the person before it runs
        tool("Create", file_path=config, content="RATE = 0.09\n"),  # the planted error
        execute(CHECK),  # fails: no PostToolUse
        text("Done."),
        tool("Edit", match=FEEDBACK, file_path=config, old_str="0.09", new_str="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = droid_env(scratch.home, upstream.base_url, scratch.vacant_home)
        installed = vacant(["init", "--platform", "droid"], workspace, env)
        assert installed.returncode == 0, installed.stderr
        assert "vacant-hook" in (workspace / ".factory" / "settings.json").read_text()
        assert vacant(["doctor", "--platform", "droid"], workspace, env).returncode == 0
        first = subprocess.run(droid_argv("set the rate in config.py"), cwd=workspace, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert first.returncode == 0, first.stderr
        requests = upstream.requests()
    assert marks(workspace) == []  # held: the person has not answered
    assert "ask#1" in tool_result(requests, "call_mark")

    log = log_of(workspace)
    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    assert [r["tool"] for r in starts.values()] == ["Read", "Execute", "Create", "Execute", "Edit"]
    assert all(r["actor"]["platform"] == "factory-droid" for r in starts.values())
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert set(ends) == set(starts), "every tool step is closed, the failed check's from the transcript"
    assert (ends[2]["outcome"], ends[4]["outcome"], ends[4]["exit_code"]) == ("not-run", "failed", 1)
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", 1) in reads
    (finding,) = report(workspace, 1)["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == ("provable", 3, "Create", "config.py")
    reached = [r for r in requests if FEEDBACK in chat_request_text(r)]
    assert reached and finding["id"] in chat_request_text(reached[0])  # the next request of the same run
    assert report(workspace, 2)["findings"] == []

    # `vacant do`: the same error planted again; its next round is a fresh droid exec with the feedback
    rounds_turns = [
        tool("Edit", file_path=config, old_str="0.08", new_str="0.07"),
        text("Done."),
        tool("Edit", match=FEEDBACK, file_path=config, old_str="0.07", new_str="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": rounds_turns}, scratch.path / "upstream2") as upstream:
        env = droid_env(scratch.home, upstream.base_url, scratch.vacant_home)
        done = vacant_do(["--", *droid_argv("set the rate again")], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr + done.stdout
    log = log_of(workspace)
    assert rounds(log) == [(2, "green")]  # the log of the last run: the second round's fresh session
    assert any(FEEDBACK in chat_request_text(r) for r in requests)
    assert (workspace / "config.py").read_text() == "RATE = 0.08\n"

    removed = vacant(["uninstall", "--platform", "droid"], workspace, env)
    assert removed.returncode == 0, removed.stderr
    assert (workspace / ".factory" / "settings.json").read_text() == THEIRS
    assert not (state_dir(workspace) / "errors.log").exists()
