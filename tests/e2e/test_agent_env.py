"""Which variables each real agent sets in the shell its tool runs commands in: the markers the
person-only CLI verbs (`vacant approve`, `unflag`, `uninstall`, …) look for to refuse an agent.

Each agent runs `env > envdump.txt` through its own shell tool, with the markers removed from the
environment it was started in, so whatever marker shows up was set by the agent itself. The test
fails when a platform sets none of `AGENT_ENV`, or when the list misses one the platform sets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_harness import tool as claude_tool
from claude_harness import turn as claude_turn
from codex_harness import FakeResponses, shell
from codex_harness import run_scripted as codex_run
from codex_harness import turn as codex_turn
from harness import text
from opencode_harness import opencode_binary, opencode_env, write_opencode_config
from vacant_run import run_scripted as claude_run

from vacant.policy.gate.asks.answer import AGENT_ENV, agent_env

pytestmark = pytest.mark.e2e

DUMP = "env > envdump.txt"


def dumped(ws: Path) -> dict[str, str]:
    lines = (ws / "envdump.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def markers(env: dict[str, str]) -> set[str]:
    return {name for name in env if name in AGENT_ENV}


def test_claude_code_tool_shell_sets_claudecode(tmp_path):
    run = claude_run(tmp_path, [claude_turn(claude_tool("Bash", command=DUMP, description="env")),
                                claude_turn(text("Done."))])
    assert run.process.returncode == 0, run.process.stderr
    env = dumped(run.workspace)
    assert env.get("CLAUDECODE") == "1" and agent_env(env) == "CLAUDECODE"
    assert markers(env) == {"CLAUDECODE"}


def test_codex_tool_shell_sets_a_codex_marker(scratch):
    run = codex_run(scratch, [codex_turn(shell(DUMP, "call_env_1")), codex_turn(text("Done."))])
    assert run.process.returncode == 0, run.process.stderr
    env = dumped(run.workspace)
    codex_names = {name for name in env if name.startswith("CODEX_") and name not in os.environ}
    assert markers(env), f"codex set none of AGENT_ENV; it set {sorted(codex_names)}"
    assert {"CODEX_SESSION_ID", "CODEX_CI"} <= codex_names, sorted(codex_names)
    assert codex_names - set(AGENT_ENV) <= {"CODEX_HOME", "CODEX_MANAGED_BY_NPM", "CODEX_MANAGED_PACKAGE_ROOT",
                                            "CODEX_VERSION", "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS"}


def test_opencode_tool_shell_sets_opencode(scratch):
    workspace = scratch.path / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    turns = [{"items": [{"type": "function", "name": "bash",
                         "arguments": {"command": DUMP, "description": "env"}}]},
             {"items": [{"type": "text", "text": "Done."}]}]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        write_opencode_config(scratch.home, upstream.base_url)
        env = dict(opencode_env(scratch.home, workspace, scratch.vacant_home), PWD=str(workspace))
        done = subprocess.run([str(opencode_binary()), "run", "dump the environment"], cwd=workspace, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    seen = dumped(workspace)
    assert seen.get("OPENCODE") == "1" and agent_env(seen) == "OPENCODE", sys.stderr
