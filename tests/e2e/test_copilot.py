"""The real `copilot` binary (@github/copilot, pinned) offline against the scripted Chat Completions
fake (fixtures/upstreams/fake_responses.py through COPILOT_PROVIDER_BASE_URL, COPILOT_OFFLINE=true).

Installed hooks (`vacant init --platform copilot`), one run: a read, an ACT arm the gate holds, the
planted error, then Stop blocks with located feedback, which comes back as the next user message
in the same run, and the fix. The person approves from the shell; a resumed run performs the arm
once. Then `vacant do --platform copilot`: the same planted error, its round continued with
`copilot --resume=<id> -p FEEDBACK`. A missing binary fails these tests, it never skips them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from codex_harness import BIN, FakeResponses, git_workspace
from harness import AGENTS_BIN, MARK, agent_binary, marks
from opencode_harness import chat_request_text
from do_harness import FEEDBACK, FILES, log_of, report, vacant_do
from chat_harness import assert_continued_with_the_feedback, text, tool, tool_result, vacant

from vacant.core.locations import state_dir
from vacant.policy.gate.asks.answer import AGENT_ENV

pytestmark = pytest.mark.e2e
MODEL = "fake-model"
FLAGS = ["--allow-all-tools", "--trust-folder"]
DENIED = "Denied by preToolUse hook: "  # what Copilot puts before a PreToolUse deny's reason (measured)


def copilot_binary() -> Path:
    return agent_binary("copilot", "GitHub Copilot")


def copilot_env(home: Path, base_url: str, vacant_home: Path) -> dict:
    """An offline run: isolated HOME, the fake as the OpenAI-compatible provider, no GitHub login."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT", "GITHUB", "GH_", "OPENAI", "CLAUDE"))}
    return {**env, "HOME": str(home), "VACANT_HOME": str(vacant_home), "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": base_url, "COPILOT_PROVIDER_API_KEY": "sk-fake", "COPILOT_MODEL": MODEL,
            "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}", "NO_COLOR": "1"}


def copilot(workspace: Path, env: dict, *args: str, flags: tuple[str, ...] = tuple(FLAGS)) -> subprocess.CompletedProcess:
    return subprocess.run([str(copilot_binary()), *flags, *args], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)


def test_installed_hooks_gate_feedback_in_the_same_run_and_the_persons_approval(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("view", path=str(workspace / "spec" / "rates.md")),
        tool("bash", call_id="call_mark_1", command="sh arms/mark.sh", description="mark"),  # ACT
        tool("create", path=config, file_text="RATE = 0.09\n"),  # the planted error
        text("Done."),
        tool("edit", match=FEEDBACK, path=config, old_str="0.09", new_str="0.08"),
        text("Fixed."),
        tool("bash", "SESSION-TWO", "call_mark_2", command="sh arms/mark.sh", description="mark"),
        text("Marked once."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = copilot_env(scratch.home, upstream.base_url, scratch.vacant_home)
        installed = vacant(["init", "--platform", "copilot"], workspace, env)
        assert installed.returncode == 0, installed.stderr
        hooks = workspace / ".github" / "hooks" / "vacant.json"
        assert "vacant-hook" in hooks.read_text()
        doctor = vacant(["doctor", "--platform", "copilot"], workspace, env)
        assert doctor.returncode == 0, doctor.stdout
        first = copilot(workspace, env, "-p", "set the rate in config.py")
        assert first.returncode == 0, first.stderr
        assert marks(workspace) == []  # held: the person has not answered

        log = log_of(workspace)
        session = next(r["session"] for r in log if r["type"] == "run_start")
        person = {k: v for k, v in env.items() if k not in AGENT_ENV}
        assert "approved ask#1" in vacant(["approve", "ask#1"], workspace, person).stdout
        # --trust-folder cannot go with --resume (measured): the session keeps the folder's trust
        second = copilot(workspace, env, f"--resume={session}", "-p", "SESSION-TWO: go on", flags=("--allow-all-tools",))
        assert second.returncode == 0, second.stderr
        requests = upstream.requests()
    assert marks(workspace) == ["marked"]  # after the approval, exactly once

    log = log_of(workspace)
    paused = [r for r in log if r["type"] == "pause_surfaced"]
    assert [(p["ask"], p["status"]) for p in paused] == [("ask#1", "awaiting-human")]
    shown = tool_result(requests, "call_mark_1")
    assert shown.startswith(DENIED)
    held = json.loads(shown[len(DENIED):])
    assert held["performed"] is False and held["askId"] == "ask#1"
    assert [r["decision"] for r in log if r["type"] == "human_decided"] == ["approved"]

    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    by_tool = {r["tool"]: step for step, r in reversed(starts.items())}
    assert all(r["actor"]["platform"] == "copilot-cli" and r["actor"]["model"] == MODEL for r in starts.values()), [
        (r["tool"], r["actor"]) for r in starts.values()]
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert set(ends) >= set(starts), "every tool step is closed"
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", by_tool["Read"]) in reads

    stopped = report(workspace, 1)
    (finding,) = stopped["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == (
        "provable", by_tool["Write"], "Write", "config.py")
    feedback = [r for r in log if r["type"] == "feedback"]
    assert feedback and finding["id"] in feedback[0]["text"]
    for identity in ("copilot", MODEL, "github"):
        assert identity not in feedback[0]["text"].lower()
    reached = [r for r in requests if FEEDBACK in chat_request_text(r)]
    assert reached and finding["id"] in chat_request_text(reached[0])  # the next request of the same run
    assert report(workspace, 2)["findings"] == []

    blame = json.loads(vacant(["blame", "config.py", "--json"], workspace, env).stdout)
    (line,) = blame["lines"]
    assert (line["text"], line["step"], line["actor"]["platform"]) == ("RATE = 0.08", by_tool["Edit"], "copilot-cli")
    page = json.loads(vacant(["view", "--no-open", "--json"], workspace, env).stdout)
    assert "Write" in Path(page["html"]).read_text()
    removed = vacant(["uninstall", "--platform", "copilot"], workspace, env)
    assert removed.returncode == 0 and not hooks.exists()
    assert not (state_dir(workspace) / "errors.log").exists()


def test_vacant_do_continues_the_session_with_the_feedback(plain_scratch):
    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws", FILES).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("create", path=config, file_text="RATE = 0.09\n"),
        text("Done."),
        tool("edit", match=FEEDBACK, path=config, old_str="0.09", new_str="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = dict(copilot_env(scratch.home, upstream.base_url, scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
        done = vacant_do(["--", str(copilot_binary()), *FLAGS, "-p", "set the rate in config.py"], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr
    assert_continued_with_the_feedback(workspace, requests, "Write")
    assert not (workspace / ".github").exists() and not (state_dir(workspace) / "errors.log").exists()
