"""`vacant do` with the real binaries: rounds really consumed on Claude Code and Codex (each round in
the step log, the feedback in the model's next request, green -> exit 0, a never-fixed finding ->
the round budget ends it with exit 1), nothing of vacant's left in any settings file after a normal
exit, an agent error, SIGINT or SIGTERM, and a plain command recorded by the watcher with its
planted error attributed to the right burst. A missing binary fails these tests, never skips."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, claude_binary, claude_env, isolated_home
from codex_harness import (
    BIN,
    CodexScratch,
    FakeResponses,
    codex_binary,
    codex_env,
    git_workspace,
    write_config,
)
from opencode_harness import opencode_binary, opencode_env, write_opencode_config
from do_harness import (
    CLAUDE_FLAGS,
    FEEDBACK,
    FILES,
    log_of,
    person_files,
    report,
    rounds,
    tools,
    vacant_do,
)
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e

def seed_person_files(scratch: CodexScratch, workspace: Path) -> None:
    """The person's own settings (with a hook of their own), as vacant do must leave them."""
    (scratch.home / ".claude").mkdir(parents=True, exist_ok=True)
    (scratch.home / ".claude" / "settings.json").write_text('{\n  "env": {"MINE": "1"}\n}\n')
    (workspace / ".claude").mkdir(exist_ok=True)
    (workspace / ".claude" / "settings.local.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}\n')
    write_config(scratch.codex_home)
    (scratch.codex_home / "hooks.json").write_text('{"hooks": {}}\n')


def no_temp_left(scratch: CodexScratch) -> list[str]:
    return sorted(p.name for p in (scratch.path / "tmp").iterdir() if p.name.startswith("vacant-do-"))


# -- Claude Code ---------------------------------------------------------------------------------


def claude_setup(scratch: CodexScratch, upstream_url: str) -> tuple[Path, dict]:
    workspace = git_workspace(scratch.path / "ws", FILES)
    isolated_home(scratch.home, workspace)
    env = dict(claude_env(scratch.home, upstream_url), VACANT_HOME=str(scratch.vacant_home),
               TMPDIR=str(scratch.path / "tmp"))
    return workspace, env


def write(ws: Path, text: str) -> dict:
    return {"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(ws / "config.py"),
                                                                         "content": text}}]}


def edit(ws: Path, old: str, new: str, match: str | None = None) -> dict:
    turn = {"content": [{"type": "tool_use", "name": "Edit", "input": {"file_path": str(ws / "config.py"),
                                                                        "old_string": old, "new_string": new}}]}
    return {**turn, "match": match} if match else turn


def say(text: str, match: str | None = None) -> dict:
    turn = {"content": [{"type": "text", "text": text}]}
    return {**turn, "match": match} if match else turn


def last_user_text(request: dict) -> str:
    messages = request["body"].get("messages") or []
    return json.dumps(messages[-1]) if messages else ""


def test_claude_rounds_until_green(plain_scratch):
    scratch = plain_scratch
    ws = (scratch.path / "ws").resolve()
    turns = [write(ws, "RATE = 0.09\n"), say("Done."), edit(ws, "0.09", "0.08", match=FEEDBACK), say("Fixed.")]
    with FakeUpstream({"turns": turns}, scratch.path / "upstream") as upstream:
        workspace, env = claude_setup(scratch, upstream.url)
        seed_person_files(scratch, workspace)
        before = person_files(scratch, workspace)
        # walled, as `vacant do` runs by default: Claude's sandbox around its Bash (a TMPDIR too long
        # for the sandbox's sockets is replaced), the hooks outside it
        done = vacant_do(["--", str(claude_binary()), "-p", "set the rate in config.py", *CLAUDE_FLAGS], workspace, env,
                         wall=True)
        requests = upstream.scripted_requests()
    assert done.returncode == 0, done.stderr
    log = log_of(workspace)
    assert rounds(log) == [(1, "continue"), (2, "green")]
    assert {r.get("walled") for r in log if r["type"] == "round"} == {True}
    assert tools(log) == ["Write", "Edit"]
    first = report(workspace, 1)
    (finding,) = first["findings"]
    assert (finding["level"], finding["step"], finding["tool"]) == ("provable", 1, "Write")
    assert first["decision"] == "block" and report(workspace)["findings"] == []
    # the feedback was the next prompt of the same session (claude -p --resume <id>)
    resumed = [r for r in requests if FEEDBACK in last_user_text(r)]
    assert len(resumed) == 1 and finding["id"] in last_user_text(resumed[0])
    sessions = {r["session"] for r in log if r["type"] == "run_start"}
    assert len(sessions) == 1 and [r["source"] for r in log if r["type"] == "run_start"] == ["startup", "resume"]
    assert report(workspace)["read_coverage"]["state"] == "complete"  # its own continuation is observed context
    assert person_files(scratch, workspace) == before and no_temp_left(scratch) == []
    assert not (state_dir(workspace) / "errors.log").exists()


def test_claude_never_fixed_is_stopped_by_the_round_budget(plain_scratch):
    scratch = plain_scratch
    ws = (scratch.path / "ws").resolve()
    turns = [write(ws, "RATE = 0.09\n"), say("Done.")]  # every later request: a plain "done."
    with FakeUpstream({"turns": turns}, scratch.path / "upstream") as upstream:
        workspace, env = claude_setup(scratch, upstream.url)
        done = vacant_do(["--rounds", "2", "--", str(claude_binary()), "-p", "set the rate", *CLAUDE_FLAGS],
                         workspace, env)
        requests = upstream.requests()
    assert done.returncode == 1, done.stderr
    log = log_of(workspace)
    assert rounds(log) == [(1, "continue"), (2, "continue"), (3, "budget_spent")]
    feedback = [r for r in log if r["type"] == "feedback"]
    assert [(r["round"], r["rounds"]) for r in feedback] == [(1, 2), (2, 2)]
    finding_id = report(workspace)["findings"][0]["id"]
    resumed = [r for r in requests if FEEDBACK in last_user_text(r)]
    assert len(resumed) == 2 and all(finding_id in last_user_text(r) for r in resumed)
    assert "round 1 of 2" in last_user_text(resumed[0]) and "round 2 of 2" in last_user_text(resumed[1])
    assert report(workspace)["decision"] == "stop"


# -- Codex ---------------------------------------------------------------------------------------


def patch(text: str, match: str | None = None) -> dict:
    turn = {"items": [{"type": "custom", "name": "apply_patch", "input": text}]}
    return {**turn, "match": match} if match else turn


def text(words: str, match: str | None = None) -> dict:
    turn = {"items": [{"type": "text", "text": words}]}
    return {**turn, "match": match} if match else turn


ADD_WRONG = "*** Begin Patch\n*** Add File: config.py\n+RATE = 0.09\n*** End Patch\n"
FIX = "*** Begin Patch\n*** Update File: config.py\n@@\n-RATE = 0.09\n+RATE = 0.08\n*** End Patch\n"


def codex_setup(scratch: CodexScratch) -> tuple[Path, dict]:
    workspace = git_workspace(scratch.path / "ws", FILES)
    write_config(scratch.codex_home)
    env = dict(codex_env(scratch.home, scratch.codex_home, scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
    return workspace, env


def codex_argv(upstream: FakeResponses, prompt: str) -> list[str]:
    return [str(codex_binary()), "exec", "--sandbox", "workspace-write", "--color", "never",
            "-c", f"model_providers.fake.base_url={json.dumps(upstream.base_url)}", prompt]


def responses_text(request: dict) -> str:
    return json.dumps(request["body"].get("input", [])[-1:])


def test_codex_rounds_until_green_then_a_budget(scratch):
    turns = [patch(ADD_WRONG), text("Done."), patch(FIX, match=FEEDBACK), text("Fixed.")]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        workspace, env = codex_setup(scratch)
        seed_person_files(scratch, workspace)
        before = person_files(scratch, workspace)
        done = vacant_do(["--", *codex_argv(upstream, "set the rate in config.py")], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr
    log = log_of(workspace)
    assert rounds(log) == [(1, "continue"), (2, "green")]
    assert tools(log) == ["apply_patch", "apply_patch"]
    (finding,) = report(workspace, 1)["findings"]
    assert (finding["level"], finding["step"], finding["actor"]["platform"]) == ("provable", 1, "codex")
    resumed = [r for r in requests if FEEDBACK in responses_text(r)]
    assert len(resumed) == 1 and finding["id"] in responses_text(resumed[0])
    # `codex exec resume <id>`: the same thread, the full history sent again
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1
    assert resumed[0]["headers"]["session-id"] == requests[0]["headers"]["session-id"]
    assert person_files(scratch, workspace) == before and no_temp_left(scratch) == []
    assert not (state_dir(workspace) / "errors.log").exists()


def test_codex_never_fixed_is_stopped_by_the_round_budget(scratch):
    with FakeResponses({"turns": [patch(ADD_WRONG), text("Done.")]}, scratch.path / "upstream") as upstream:
        workspace, env = codex_setup(scratch)
        done = vacant_do(["--rounds", "1", "--", *codex_argv(upstream, "set the rate")], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 1, done.stderr
    assert rounds(log_of(workspace)) == [(1, "continue"), (2, "budget_spent")]
    assert len([r for r in requests if FEEDBACK in responses_text(r)]) == 1


# -- no leftover config, whatever the exit -------------------------------------------------------


def agent_command(platform: str, scratch: CodexScratch, upstream, workspace: Path) -> tuple[list[str], dict]:
    if platform == "claude":
        env = dict(claude_env(scratch.home, upstream.url), VACANT_HOME=str(scratch.vacant_home))
        return [str(claude_binary()), "-p", "set the rate", *CLAUDE_FLAGS], env
    if platform == "codex":
        return codex_argv(upstream, "set the rate"), codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    write_opencode_config(scratch.home, upstream.base_url)
    return [str(opencode_binary()), "run", "set the rate"], opencode_env(scratch.home, workspace, scratch.vacant_home)


def upstream_for(platform: str, turns: list[dict], workdir: Path):
    return FakeUpstream({"turns": turns}, workdir) if platform == "claude" else FakeResponses({"turns": turns}, workdir)


def slow_turn(platform: str, workspace: Path) -> dict:
    """A turn that keeps the agent waiting on the model: the moment to interrupt it."""
    if platform == "claude":
        return {**write(workspace, "RATE = 0.09\n"), "delay": 60}
    if platform == "codex":
        return {**patch(ADD_WRONG), "delay": 60}
    return {"items": [{"type": "text", "text": "thinking"}], "delay": 60}


def error_turn(platform: str) -> dict:
    return {"http_error": 400 if platform == "claude" else 500}


CASES = [(p, k) for p in ("claude", "codex") for k in ("normal", "error", "sigint", "sigterm")] + \
        [("opencode", "sigint"), ("opencode", "sigterm")]


@pytest.mark.parametrize("platform, exit_kind", CASES, ids=[f"{p}-{k}" for p, k in CASES])
def test_no_vacant_config_is_left_after_any_exit(scratch, platform, exit_kind):
    workspace = git_workspace(scratch.path / "ws", FILES).resolve()
    seed_person_files(scratch, workspace)
    isolated_home(scratch.home, workspace)
    if exit_kind == "normal":
        turns = [write(workspace, "RATE = 0.08\n"), say("Done.")] if platform == "claude" else \
            [patch("*** Begin Patch\n*** Add File: config.py\n+RATE = 0.08\n*** End Patch\n"), text("Done.")]
    elif exit_kind == "error":
        turns = [error_turn(platform)]
    else:
        turns = [slow_turn(platform, workspace)]
    with upstream_for(platform, turns, scratch.path / "upstream") as upstream:
        argv, env = agent_command(platform, scratch, upstream, workspace)
        env["TMPDIR"] = str(scratch.path / "tmp")
        before = person_files(scratch, workspace)
        if exit_kind in ("normal", "error"):
            # walled: the sandbox settings the wall adds must go too
            done = vacant_do(["--rounds", "0", "--", *argv], workspace, env, wall=True)
            expected = 0 if exit_kind == "normal" else 1
        else:
            done = interrupted(["--", *argv], workspace, env, upstream,
                               signal.SIGINT if exit_kind == "sigint" else signal.SIGTERM)
            expected = 130
    assert done.returncode == expected, done.stderr
    assert person_files(scratch, workspace) == before
    assert no_temp_left(scratch) == []
    if exit_kind in ("sigint", "sigterm"):
        assert "vacant's hooks are gone" in done.stderr


def interrupted(args: list[str], workspace: Path, env: dict, upstream, signum: int) -> subprocess.CompletedProcess:
    """Start `vacant do`, wait until the agent is waiting on the model, then signal vacant do only."""
    proc = subprocess.Popen([str(BIN / "vacant"), "do", *args], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not upstream.scripted_requests():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the agent never asked the model"
            time.sleep(0.1)
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# -- any other command: the watcher --------------------------------------------------------------

AGENT_SCRIPT = """#!/bin/sh
# burst 1: the right value, and notes
echo "RATE = 0.08" > config.py
mkdir -p notes && echo "first pass" > notes/a.txt
sleep 2
# a read-only pass between the bursts: no step
cat config.py notes/a.txt > /dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do cat check_value.py > /dev/null; done
sleep 2
# burst 2: the planted error
echo "RATE = 0.09" > config.py
echo "second pass" >> notes/a.txt
"""


def test_a_plain_command_is_recorded_burst_by_burst(plain_scratch):
    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws", FILES)
    script = scratch.path / "agent.sh"
    script.write_text(AGENT_SCRIPT)
    script.chmod(0o755)
    env = dict(os.environ, VACANT_HOME=str(scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
    done = vacant_do(["--", str(script)], workspace, env)
    assert done.returncode == 1, done.stderr
    log = log_of(workspace)
    starts = [r for r in log if r["type"] == "step_start"]
    assert [(r["step"], r["tool"], r["input"]["burst"]) for r in starts] == [(1, "burst", 1), (2, "burst", 2)]
    assert all(r["actor"]["platform"] == "command" and r["actor"]["agent_definition"] == "agent.sh" for r in starts)
    changes = {r["step"]: sorted({**r["added"], **r["changed"]}) for r in log if r["type"] == "change"}
    assert changes == {1: ["config.py", "notes", "notes/a.txt"], 2: ["config.py", "notes/a.txt"]}
    final = report(workspace)
    (finding,) = final["findings"]
    assert (finding["level"], finding["step"], finding["path"], finding["line"]) == ("provable", 2, "config.py", 1)
    assert finding["actor"]["platform"] == "command"
    assert final["read_coverage"]["state"] == "none"
    assert rounds(log) == [(1, "cannot_continue")]
    assert not [r for r in log if r["type"] == "feedback"]  # nobody to tell: the person reads the report
    assert "step 2 (burst)" in done.stderr
