"""The real `cline` binary (cline 3.0.65, pinned) offline against the scripted Chat Completions fake
(fixtures/upstreams/fake_responses.py, configured with `cline auth -p openai-compatible -b URL`).

Installed hooks (`vacant init --platform cline`, one executable per event in .clinerules/hooks/).
First run: a read, the planted error, a failing check, then TaskComplete (detached in Cline: it
reports, nothing can reach the model) writes the report with the write provable. Second run: an
ACT arm the gate denies before it runs; Cline's only deny aborts the task. Then `vacant uninstall`
removes every hook file. A missing binary fails this test, it never skips it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from chat_harness import text, tool, vacant
from codex_harness import BIN, FakeResponses, git_workspace
from do_harness import FEEDBACK, FILES, log_of, rounds, vacant_do
from opencode_harness import chat_request_text
from harness import AGENTS_BIN, MARK, agent_binary, marks

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e
MODEL = "fake-model"


def cline_binary() -> Path:
    return agent_binary("cline", "Cline")


def cline_env(home: Path, vacant_home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLINE", "OPENAI", "ANTHROPIC"))}
    return {**env, "HOME": str(home), "VACANT_HOME": str(vacant_home), "NO_COLOR": "1",
            "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}"}


def cline(workspace: Path, env: dict, state: Path, *args: str) -> subprocess.CompletedProcess:
    flags = ["--config", str(state / "config"), "--data-dir", str(state / "data")]
    return subprocess.run([str(cline_binary()), *args[:1], *flags, *args[1:]], cwd=workspace, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


def hooked(workspace: Path, scratch, state: Path, base_url: str) -> dict:
    """Cline pointed at the fake upstream, vacant's hooks installed: the environment to run it in."""
    env = cline_env(scratch.home, scratch.vacant_home)
    authed = cline(workspace, env, state, "auth", "-p", "openai-compatible", "-k", "sk-fake", "-b", base_url, "-m", MODEL)
    assert authed.returncode == 0, authed.stderr
    installed = vacant(["init", "--platform", "cline"], workspace, env)
    assert installed.returncode == 0, installed.stderr
    return env


def wait_for_report(workspace: Path, seconds: float = 120) -> str:
    """TaskComplete runs detached: its report may be written after `cline` exits. The run's id."""
    end = time.monotonic() + seconds
    while not (reports := list((state_dir(workspace) / "runs").glob("*/report.json"))):
        assert time.monotonic() < end, "no report after TaskComplete"
        time.sleep(0.5)
    return reports[0].parent.name


def records(workspace: Path, env: dict, run: str) -> list[dict]:
    return [json.loads(line) for line in vacant(["log", "--json", run], workspace, env).stdout.splitlines() if line]


def test_installed_hooks_record_report_and_abort_on_a_deny(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config, state = str(workspace / "config.py"), scratch.path / "cline"
    turns = [
        tool("read_files", files=[{"path": str(workspace / "spec" / "rates.md")}]),
        tool("editor", path=config, new_text="RATE = 0.09\n"),  # the planted error
        tool("run_commands", commands=["python3 check_value.py RATE config.py 0.08"]),
        text("Done."),
        tool("run_commands", "SECOND", commands=["sh arms/mark.sh"]),  # ACT: denied
        text("never reached"),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = hooked(workspace, scratch, state, upstream.base_url)
        hooks = workspace / ".clinerules" / "hooks"
        assert "vacant-hook" in (hooks / "PreToolUse").read_text()
        assert vacant(["doctor", "--platform", "cline"], workspace, env).returncode == 0
        first = cline(workspace, env, state, "--json", "set the rate in config.py")
        assert first.returncode == 0, first.stderr
        run = wait_for_report(workspace)
        second = cline(workspace, env, state, "--json", "SECOND: mark it")
        requests = upstream.requests()
    assert marks(workspace) == []  # denied before it ran
    assert '"finishReason":"aborted"' in second.stdout  # Cline's deny aborts the task
    assert not any("never reached" in str(r["body"]) for r in requests)

    log = records(workspace, env, run)
    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    assert [r["tool"] for r in starts.values()] == ["read_files", "editor", "run_commands"]
    assert all(r["actor"]["platform"] == "cline" for r in starts.values())
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert set(ends) == set(starts) and (ends[3]["outcome"], ends[3]["exit_code"]) == ("failed", 1)
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", 1) in reads
    assert ("command", "python3 check_value.py RATE config.py 0.08", 3) in reads
    (finding,) = json.loads(vacant(["report", "--json", run], workspace, env).stdout)["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == ("provable", 2, "editor", "config.py")
    assert [r for r in log if r["type"] == "feedback"] == []  # nothing could carry it

    denied = log_of(workspace)  # the second run: the arm held for the person, its step never run
    assert [r["outcome"] for r in denied if r["type"] == "step_end"] == ["not-run"]
    assert [r["status"] for r in denied if r["type"] == "pause_surfaced"] == ["awaiting-human"]

    removed = vacant(["uninstall", "--platform", "cline"], workspace, env)
    assert removed.returncode == 0, removed.stderr
    assert not (workspace / ".clinerules").exists()
    assert not (state_dir(workspace) / "errors.log").exists()


def test_vacant_do_relaunches_the_task_with_the_feedback(plain_scratch):
    """Cline's Stop reports only and its task cannot be resumed headless: `vacant do`'s next round
    is the same command with the feedback as its prompt, a new task in the same workspace."""
    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws", FILES).resolve()
    config, state = str(workspace / "config.py"), scratch.path / "cline"
    turns = [
        tool("editor", path=config, new_text="RATE = 0.09\n"),  # the planted error
        text("Done."),
        tool("editor", match=FEEDBACK, path=config, old_text="RATE = 0.09", new_text="RATE = 0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = hooked(workspace, scratch, state, upstream.base_url)
        flags = ["--config", str(state / "config"), "--data-dir", str(state / "data")]
        done = vacant_do(["--", str(cline_binary()), *flags, "--json", "set the rate in config.py"], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr + done.stdout
    assert "round 2: green" in done.stderr, done.stderr
    feedback = next(r for r in requests if FEEDBACK in chat_request_text(r))  # the second task's prompt
    first_runs = sorted((state_dir(workspace) / "runs").glob("*/events.jsonl"), key=lambda p: p.stat().st_mtime)
    assert len(first_runs) == 2, "each round is a task of its own"
    first = [json.loads(line) for line in first_runs[0].read_text().splitlines()]
    assert [(r["round"], r["decision"]) for r in first if r["type"] == "round"] == [(1, "continue")]
    (finding,) = report_of(workspace, first_runs[0].parent.name)["findings"]
    assert (finding["level"], finding["tool"]) == ("provable", "editor")
    assert finding["id"] in chat_request_text(feedback)
    assert rounds(log_of(workspace)) == [(2, "green")]
    assert (workspace / "config.py").read_text() == "RATE = 0.08\n"
    assert not (state_dir(workspace) / "errors.log").exists()


def report_of(workspace: Path, run: str) -> dict:
    return json.loads(subprocess.run([str(BIN / "vacant"), "report", "--json", run], cwd=workspace,
                                     capture_output=True, text=True, check=True).stdout)
