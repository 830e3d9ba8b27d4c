"""The real `pi` binary (@mariozechner/pi-coding-agent, pinned) offline against the scripted Chat
Completions fake (fixtures/upstreams/fake_responses.py, a provider in `~/.pi/agent/models.json`).

Installed extension (`vacant init --platform pi`), one `pi -p` process: a read, an ACT arm the gate
denies before it runs, the planted error, then Stop blocks with located feedback, which reaches the
model as the next prompt of the same session in the same process, and the fix. Then `vacant
uninstall` leaves every file as it was. A missing binary fails this test, it never skips it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from chat_harness import text, tool, tool_result, vacant
from codex_harness import BIN, FakeResponses, git_workspace
from do_harness import FEEDBACK, FILES, log_of, report
from harness import AGENTS_BIN, MARK, agent_binary, marks
from opencode_harness import chat_request_text

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e
PROVIDER, MODEL = "fake", "fake-model"


def pi_binary() -> Path:
    return agent_binary("pi", "pi")


def write_models(home: Path, base_url: str) -> Path:
    """The person's own pi config: the fake as an OpenAI-compatible provider."""
    path = home / ".pi" / "agent" / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"providers": {PROVIDER: {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "sk-fake",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": MODEL}]}}}, indent=2) + "\n")
    return path


def pi_env(home: Path, vacant_home: Path) -> dict:
    """An offline run: isolated HOME, no update check or telemetry."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "OPENAI", "ANTHROPIC"))}
    return {**env, "HOME": str(home), "VACANT_HOME": str(vacant_home), "PI_OFFLINE": "1",
            "PATH": f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}", "NO_COLOR": "1"}


PI_OWN = ("sessions", "auth.json")  # what pi itself writes under ~/.pi/agent on a run


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under `roots` but git's, and pi's own sessions and auth file."""
    return {str(p): p.read_bytes() for root in roots for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts and not set(PI_OWN) & set(p.parts)}


def test_installed_extension_records_gates_and_feeds_back_in_the_same_process(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    turns = [
        tool("read", path="spec/rates.md"),
        tool("bash", call_id="call_mark", command="sh arms/mark.sh"),  # ACT: held for the person
        tool("bash", command="python3 check_value.py RATE config.py 0.08"),  # fails: exit 1
        tool("write", path="config.py", content="RATE = 0.09\n"),  # the planted error
        text("Done."),
        tool("edit", match=FEEDBACK, path="config.py", edits=[{"oldText": "0.09", "newText": "0.08"}]),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        write_models(scratch.home, upstream.base_url)
        env = pi_env(scratch.home, scratch.vacant_home)
        before = snapshot(workspace, scratch.home)
        installed = vacant(["init", "--platform", "pi"], workspace, env)
        assert installed.returncode == 0, installed.stderr
        extension = workspace / ".pi" / "extensions" / "vacant.ts"
        assert "vacant-hook" in extension.read_text()
        doctor = vacant(["doctor", "--platform", "pi"], workspace, env)
        assert doctor.returncode == 0, doctor.stdout
        ran = subprocess.run([str(pi_binary()), "-p", "--provider", PROVIDER, "--model", MODEL,
                              "set the rate in config.py"], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=300)
        requests = upstream.requests()
    assert ran.returncode == 0, ran.stderr
    assert marks(workspace) == []  # denied before it ran
    held = json.loads(tool_result(requests, "call_mark"))
    assert held["performed"] is False

    log = log_of(workspace)
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1
    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    assert [r["tool"] for r in starts.values()] == ["read", "bash", "bash", "write", "edit"]
    assert all(r["actor"]["platform"] == "pi" and r["actor"]["model"] == f"{PROVIDER}/{MODEL}"
               for r in starts.values())
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert set(ends) == set(starts), "every tool step is closed"
    assert (ends[2]["outcome"], ends[3]["outcome"], ends[3]["exit_code"]) == ("not-run", "failed", 1)
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", 1) in reads and ("prompt", "user", None) in reads
    assert ("command", "python3 check_value.py RATE config.py 0.08", 3) in reads

    (finding,) = report(workspace, 1)["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == ("provable", 4, "write", "config.py")
    feedback = [r for r in log if r["type"] == "feedback"]
    assert len(feedback) == 1 and finding["id"] in feedback[0]["text"]
    reached = [r for r in requests if FEEDBACK in chat_request_text(r)]
    assert reached and finding["id"] in chat_request_text(reached[0])  # the next prompt, same process
    final = report(workspace, 2)
    assert final["findings"] == [] and final["decision"] == "stop"
    assert (workspace / "config.py").read_text() == "RATE = 0.08\n"

    removed = vacant(["uninstall", "--platform", "pi"], workspace, env)
    assert removed.returncode == 0, removed.stderr
    assert not (workspace / ".pi").exists()
    after = snapshot(workspace, scratch.home)
    assert {k: v for k, v in after.items() if k != str(workspace / "config.py")} == \
        {k: v for k, v in before.items() if k != str(workspace / "config.py")}
    assert not (state_dir(workspace) / "errors.log").exists()
