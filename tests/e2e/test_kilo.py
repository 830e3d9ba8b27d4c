"""The real `kilo` binary (Kilo Code, `@kilocode/cli` 7.7.7, pinned) offline against the scripted Chat
Completions fake (fixtures/upstreams/fake_responses.py), its provider in the isolated
~/.config/kilo/kilo.json. Kilo is an OpenCode fork: vacant's OpenCode plugin records it
(vacant/platforms/kilo.py).

Installed plugin (`vacant init --platform kilo`), one `kilo run`: a read, an ACT arm the gate holds
before it runs, the planted error, a failing check, then at `session.idle` the Stop pipeline blocks
and the plugin puts the feedback to the session: it comes back as the next request of the same run,
and the fix is green at the next idle. `vacant uninstall` leaves the person's project config as it
was, byte for byte. Then `vacant do` (its plugin a temporary file in $KILO_CONFIG_CONTENT): the same
planted error, fed back in the same run, green. The environment turns off Kilo's daemon, update
check, model-list fetch and telemetry (no network waits). A missing binary fails this test, it never
skips it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from chat_harness import text, tool, tool_result, vacant
from codex_harness import FakeResponses, git_workspace
from do_harness import CHECK, FEEDBACK, FILES, log_of, report, rounds, vacant_do
from harness import AGENTS_BIN, BIN, MARK, agent_binary, marks
from opencode_harness import chat_request_text

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e
MODEL = "fake/fake-model"
# the person's project config, kept byte for byte (with the "$schema" line Kilo adds to one without)
THEIRS = '{\n  "$schema": "https://app.kilo.ai/config.json",\n  "theirs": true\n}\n'
# Kilo's switches for an offline run: no daemon, no update check, no model list, no telemetry,
# no session upload, no presence, no LSP download, none of its default plugins
QUIET = {"KILO_NO_DAEMON": "1", "KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1",
         "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_SESSION_INGEST": "1", "KILO_DISABLE_PRESENCE": "1",
         "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_SHARE": "1", "KILO_DISABLE_DEFAULT_PLUGINS": "1",
         "KILO_DISABLE_CLAUDE_CODE": "1", "KILO_DISABLE_EXTERNAL_SKILLS": "1"}


def kilo_env(home: Path, workspace: Path, base_url: str, vacant_home: Path) -> dict:
    """An offline run: isolated HOME and XDG directories whose kilo.json names the fake provider."""
    config = home / ".config" / "kilo"
    config.mkdir(parents=True, exist_ok=True)
    (config / "kilo.json").write_text(json.dumps({
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                              "options": {"baseURL": base_url, "apiKey": "sk-fake"},
                              "models": {"fake-model": {"name": "Fake Model", "tool_call": True}}}},
        "model": MODEL, "small_model": MODEL, "autoupdate": False, "share": "disabled",
        "experimental": {"openTelemetry": False}}))
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("KILO", "OPENCODE"))}
    env.update(QUIET, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"), PWD=str(workspace),
               VACANT_HOME=str(vacant_home), NO_COLOR="1",
               PATH=f"{AGENTS_BIN}{os.pathsep}{BIN}{os.pathsep}{env.get('PATH', '')}")
    return env


def kilo_argv(prompt: str) -> list[str]:
    return [str(agent_binary("kilo", "Kilo Code")), "run", "--auto", prompt]


def test_installed_plugin_gate_feedback_in_the_same_run(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n", "arms/mark.sh": MARK, ".kilo/kilo.json": THEIRS}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("read", filePath=str(workspace / "spec" / "rates.md")),
        tool("bash", call_id="call_mark", command="sh arms/mark.sh", description="mark"),  # ACT: held
        tool("write", filePath=config, content="RATE = 0.09\n"),  # the planted error
        tool("bash", command=CHECK, description="check"),  # fails: exit 1
        text("Done."),
        tool("edit", match=FEEDBACK, filePath=config, oldString="0.09", newString="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        env = kilo_env(scratch.home, workspace, upstream.base_url, scratch.vacant_home)
        installed = vacant(["init", "--platform", "kilo"], workspace, env)
        assert installed.returncode == 0, installed.stderr
        plugin = workspace / ".kilo" / "plugins" / "vacant.js"
        assert "vacant-hook" in plugin.read_text()
        assert vacant(["doctor", "--platform", "kilo"], workspace, env).returncode == 0
        ran = subprocess.run(kilo_argv("set the rate in config.py"), cwd=workspace, env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        requests = upstream.requests()
    assert ran.returncode == 0, ran.stderr
    assert marks(workspace) == []  # held before it ran: the person has not answered
    assert "ask#1" in tool_result(requests, "call_mark")

    log = log_of(workspace)
    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r["tool"] != "oob"}
    assert [r["tool"] for r in starts.values()] == ["read", "bash", "write", "bash", "edit"]
    assert all(r["actor"] == {"platform": "kilo", "agent_definition": "main", "model": MODEL, "task_family": "config"}
               for r in starts.values())
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert (ends[4]["outcome"], ends[4]["exit_code"]) == ("failed", 1)
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", 1) in reads and ("prompt", "user", None) in reads
    (finding,) = report(workspace, 1)["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == ("provable", 3, "write", "config.py")
    reached = [r for r in requests if FEEDBACK in chat_request_text(r)]
    assert reached and finding["id"] in chat_request_text(reached[0])  # the next request of the same run
    assert report(workspace, 2)["findings"] == [] and (workspace / "config.py").read_text() == "RATE = 0.08\n"
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1

    removed = vacant(["uninstall", "--platform", "kilo"], workspace, env)
    assert removed.returncode == 0, removed.stderr
    assert not plugin.exists() and (workspace / ".kilo" / "kilo.json").read_text() == THEIRS



def test_vacant_do_rounds_over_one_kilo_session(plain_scratch):
    """`vacant do` in a fresh project (the plugin a temporary file): the planted error, then round 2
    continues the session (`kilo run --session <id> FEEDBACK`). A test of its own, so that xdist runs
    it beside the installed plugin's (each start of kilo costs about 10 s of CPU)."""
    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws2", FILES).resolve()
    config = str(workspace / "config.py")
    again = [
        tool("write", filePath=config, content="RATE = 0.07\n"),
        text("Done."),
        tool("edit", match=FEEDBACK, filePath=config, oldString="0.07", newString="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": again}, scratch.path / "upstream2") as upstream:
        env = kilo_env(scratch.home, workspace, upstream.base_url, scratch.vacant_home)
        env["PWD"] = "/"  # stale on purpose: vacant do sets it to the project
        done = vacant_do(["--platform", "kilo", "--", *kilo_argv("set the rate again")], workspace, env)
        requests = upstream.requests()
    assert done.returncode == 0, done.stderr + done.stdout
    assert any(FEEDBACK in chat_request_text(r) for r in requests)
    log = log_of(workspace)
    assert rounds(log) == [(1, "continue"), (2, "green")]
    assert [r["tool"] for r in log if r["type"] == "step_start" and r["tool"] != "oob"] == ["write", "edit"]
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1
    assert report(workspace)["findings"] == [] and (workspace / "config.py").read_text() == "RATE = 0.08\n"
    assert not (workspace / ".kilo").exists()
    assert not (state_dir(workspace) / "errors.log").exists()
