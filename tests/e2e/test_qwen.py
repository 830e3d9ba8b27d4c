"""The real `qwen` binary (@qwen-code/qwen-code, pinned) offline against the scripted Chat
Completions fake (fixtures/upstreams/fake_responses.py through OPENAI_BASE_URL).

Installed hooks (`vacant init --platform qwen`), one run: a read, an ACT arm the gate holds, the
planted error, then Stop blocks with located feedback, which comes back as the next user message
in the same run, and the fix. The person approves from the shell; a resumed run performs the arm
once. Then `vacant do --platform qwen`: the same planted error, its round continued with
`qwen --resume <id> FEEDBACK`. A missing binary fails these tests, it never skips them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from codex_harness import BIN, FakeResponses, git_workspace
from harness import AGENTS_BIN, MARK, agent_binary, marks
from chat_harness import assert_continued_with_the_feedback, text, tool, tool_result, vacant
from opencode_harness import chat_request_text
from do_harness import FEEDBACK, FILES, log_of, report, vacant_do

from vacant.core.locations import state_dir
from vacant.policy.gate.asks.answer import AGENT_ENV

pytestmark = pytest.mark.e2e
MODEL = "fake-model"
FLAGS = ["--auth-type", "openai", "--approval-mode", "yolo"]


def qwen_binary() -> Path:
    return agent_binary("qwen", "Qwen Code")


def qwen_env(home: Path, base_url: str, vacant_home: Path) -> dict:
    """An offline run: isolated HOME, the fake as the OpenAI-compatible upstream."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QWEN", "OPENAI", "CLAUDE"))}
    return {**env, "HOME": str(home), "VACANT_HOME": str(vacant_home), "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-fake", "OPENAI_MODEL": MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}", "NO_COLOR": "1"}


def qwen(workspace: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(qwen_binary()), *FLAGS, *args], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)


def test_installed_hooks_gate_feedback_in_the_same_run_and_the_persons_approval(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("read_file", file_path=str(workspace / "spec" / "rates.md")),
        tool("run_shell_command", call_id="call_mark_1", command="sh arms/mark.sh", description="mark"),  # ACT
        tool("write_file", file_path=config, content="RATE = 0.09\n"),  # the planted error
        text("Done."),
        tool("edit", match=FEEDBACK, file_path=config, old_string="0.09", new_string="0.08"),
        text("Fixed."),
        tool("run_shell_command", "SESSION-TWO", "call_mark_2", command="sh arms/mark.sh", description="mark"),
        text("Marked once."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = qwen_env(scratch.home, upstream.base_url, scratch.vacant_home)
        installed = vacant(["init", "--platform", "qwen"], workspace, env)
        assert installed.returncode == 0, installed.stderr
        settings = workspace / ".qwen" / "settings.json"
        assert "vacant-hook" in settings.read_text()
        doctor = vacant(["doctor", "--platform", "qwen"], workspace, env)
        assert doctor.returncode == 0, doctor.stdout
        first = qwen(workspace, env, "set the rate in config.py")
        assert first.returncode == 0, first.stderr
        assert marks(workspace) == []  # held: the person has not answered

        log = log_of(workspace)
        session = next(r["session"] for r in log if r["type"] == "run_start")
        person = {k: v for k, v in env.items() if k not in AGENT_ENV}
        assert "approved ask#1" in vacant(["approve", "ask#1"], workspace, person).stdout
        second = qwen(workspace, env, "--resume", session, "SESSION-TWO: go on")
        assert second.returncode == 0, second.stderr
        requests = upstream.requests()
    assert marks(workspace) == ["marked"]  # after the approval, exactly once

    log = log_of(workspace)
    paused = [r for r in log if r["type"] == "pause_surfaced"]
    assert [(p["ask"], p["status"]) for p in paused] == [("ask#1", "awaiting-human")]
    held = json.loads(tool_result(requests, "call_mark_1"))
    assert held["performed"] is False and held["askId"] == "ask#1"
    assert [r["decision"] for r in log if r["type"] == "human_decided"] == ["approved"]

    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    by_tool = {r["tool"]: step for step, r in reversed(starts.items())}
    assert all(r["actor"]["platform"] == "qwen-code" and r["actor"]["model"] == MODEL for r in starts.values())
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert set(ends) >= set(starts), "every tool step is closed"
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", by_tool["read_file"]) in reads

    stopped = report(workspace, 1)
    (finding,) = stopped["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == (
        "provable", by_tool["write_file"], "write_file", "config.py")
    feedback = [r for r in log if r["type"] == "feedback"]
    assert feedback and finding["id"] in feedback[0]["text"]
    for identity in ("qwen", MODEL, "openai"):
        assert identity not in feedback[0]["text"].lower()
    reached = [r for r in requests if FEEDBACK in chat_request_text(r)]
    assert reached and finding["id"] in chat_request_text(reached[0])  # the next request of the same run
    assert report(workspace, 2)["findings"] == []

    blame = json.loads(vacant(["blame", "config.py", "--json"], workspace, env).stdout)
    (line,) = blame["lines"]
    assert (line["text"], line["step"], line["actor"]["platform"]) == ("RATE = 0.08", by_tool["edit"], "qwen-code")
    page = json.loads(vacant(["view", "--no-open", "--json"], workspace, env).stdout)
    assert "write_file" in Path(page["html"]).read_text()
    removed = vacant(["uninstall", "--platform", "qwen"], workspace, env)
    # Qwen itself wrote `"$version": 4` into the file it loaded: that change is kept, vacant's hooks go
    assert removed.returncode == 0 and json.loads(settings.read_text()) == {"$version": 4}
    assert not (state_dir(workspace) / "errors.log").exists()


def test_vacant_do_continues_the_session_with_the_feedback(plain_scratch):
    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws", FILES).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("write_file", file_path=config, content="RATE = 0.09\n"),
        text("Done."),
        # Qwen refuses to change a file this session has not read (measured): read it first
        tool("read_file", match=FEEDBACK, file_path=config),
        tool("edit", file_path=config, old_string="0.09", new_string="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = dict(qwen_env(scratch.home, upstream.base_url, scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
        (scratch.path / "tmp").mkdir(exist_ok=True)
        done = vacant_do(["--", str(qwen_binary()), *FLAGS, "set the rate in config.py"], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr
    assert_continued_with_the_feedback(workspace, requests, "write_file")
    assert not (workspace / ".qwen").exists() and not (state_dir(workspace) / "errors.log").exists()
