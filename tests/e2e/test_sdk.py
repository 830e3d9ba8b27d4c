"""The Claude Agent SDK (Python, the real `claude-agent-sdk` package, pinned in locks/test.txt) with
vacant's hooks in-process (`vacant.sdk.hooks`): an agent program (tests/e2e/sdk_agent.py) drives
the pinned claude binary (`cli_path`) against the scripted upstream in a workspace set up with a
plain `vacant init` (no settings-file hooks: the SDK's are the only ones). One query: a Write and
a Bash step recorded with what they read, a `git push` denied by the gate before it runs (the
remote keeps no ref), an Edit that breaks the project's guard fed back at the Stop, and the fix
made in the same query, after which the Stop lets it end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, claude_binary, claude_env, isolated_home, tool, turn
from harness import h, text, vacant

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e

AGENT = Path(__file__).with_name("sdk_agent.py")
CALC = "def add(a, b):\n    return a + b\n"
SUITE = ("import unittest\n\nfrom calc import add\n\n\nclass AddTests(unittest.TestCase):\n"
         "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n")


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, text=True).stdout


def workspace(tmp_path: Path) -> tuple[Path, Path, Path, dict]:
    """A git project with a remote, its suite kept as a guard, vacant set up without a platform."""
    ws, home, remote = tmp_path / "ws", tmp_path / "home", tmp_path / "remote.git"
    for rel, body in {"calc.py": CALC, "tests/__init__.py": "", "tests/test_calc.py": SUITE}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(body)
    isolated_home(home, ws)
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(ws, "init", "-q", "-b", "main")
    git(ws, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "start")
    git(ws, "remote", "add", "origin", str(remote))
    env = dict(os.environ, HOME=str(home), VACANT_HOME=str(home / "vacant-data"))
    vacant(["init"], ws, env=env)
    vacant(["contract", "add", "tests", "--keep", "--", f"{sys.executable} -m unittest tests.test_calc"], ws, env=env)
    return ws, home, remote, env


def tool_results(requests: list[dict]) -> dict[str, tuple[str, bool]]:
    """tool_use_id -> (the text the model got, is_error), from the requests claude sent."""
    out: dict[str, tuple[str, bool]] = {}
    for request in requests:
        for message in request["body"].get("messages", []):
            for block in message["content"] if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
                    out[block["tool_use_id"]] = (content, bool(block.get("is_error")))
    return out


def test_an_sdk_agent_is_recorded_gated_and_fed_back_in_one_query(tmp_path):
    ws, home, remote, env = workspace(tmp_path)
    calc = str(ws / "calc.py")
    turns = [
        turn(tool("Write", file_path=str(ws / "NOTES.md"), content="calc: add two numbers\n")),
        turn(tool("Bash", command="cat NOTES.md", description="look")),
        turn(tool("Read", file_path=calc)),
        turn(tool("Edit", file_path=calc, old_string="return a + b", new_string="return a - b")),
        turn(tool("Bash", command="git push origin main", description="publish")),
        turn(text("Done.")),  # the Stop: the guard is broken
        turn(tool("Edit", file_path=calc, old_string="return a - b", new_string="return a + b"),
             match="broke this guard"),
        turn(text("Fixed.")),
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        agent_env = {**claude_env(home, upstream.url), "VACANT_HOME": str(home / "vacant-data")}
        proc = subprocess.run([sys.executable, str(AGENT), str(ws), str(claude_binary()), "tidy calc.py"],
                              cwd=ws, env=agent_env, capture_output=True, text=True, timeout=300)
        requests = upstream.requests()
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    [result] = [line for line in lines if line["type"] == "ResultMessage"]
    assert result["is_error"] is False and result["result"] == "Fixed."
    [events] = [line["events"] for line in lines if line["type"] == "events"]

    log = [json.loads(line) for line in vacant(["log", "--json"], ws, env=env).stdout.splitlines() if line.strip()]
    starts = [r for r in log if r["type"] == "step_start"]
    assert [s["tool"] for s in starts] == ["Write", "Bash", "Read", "Edit", "Bash", "Edit"], events
    assert len(starts) == [event for event, _ in events].count("PreToolUse")  # each call recorded once, by the SDK's hooks
    bodies = [json.dumps(r.get("body")) for r in requests]
    push = starts[4]
    assert "git push" in json.dumps(push) and not git(remote, "for-each-ref")  # denied: nothing reached the remote
    held, is_error = tool_results(requests)[push["key"].rsplit("/", 1)[-1]]
    assert is_error and json.loads(held)["performed"] is False, held  # the model was told it did not run
    reads = {(r["step"], r["origin"], r["ref"]): r["object"] for r in log if r["type"] == "read"}
    assert reads[(starts[1]["step"], "command", "cat NOTES.md")] == h(b"calc: add two numbers")  # what it printed (Claude drops the last newline)
    assert reads[(starts[2]["step"], "file", "calc.py")] == h(CALC.encode())

    stops = json.loads(vacant(["report", "--json"], ws, env=env).stdout)["stop"]
    reports = [json.loads(vacant(["report", "--json", "--stop", str(n)], ws, env=env).stdout)
               for n in range(1, stops + 1)]
    assert [r["decision"] for r in reports] == ["block", "stop"], json.dumps(reports, indent=1)[:3000]
    [finding] = reports[0]["findings"]
    assert (finding["name"], finding["flip_step"], finding["tool"]) == ("tests", starts[3]["step"], "Edit")
    told = [b for b in bodies if "broke this guard" in b]
    assert told and f"broke this guard at step {starts[3]['step']} (Edit)" in told[0]
    assert reports[1]["findings"] == [] and all(c["passed"] for c in reports[1]["checks"])
    errors = state_dir(ws) / "errors.log"
    assert not errors.exists(), errors.read_text()
