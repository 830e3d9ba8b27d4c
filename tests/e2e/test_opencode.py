"""The real `opencode` binary (opencode-ai, pinned) under `vacant do --platform opencode`: a planted
error end to end. The plugin (vacant/platforms/assets/opencode-plugin.js, in a temporary $OPENCODE_CONFIG_DIR)
records every tool call; OpenCode has no Stop hook, so `vacant do` runs the Stop pipeline when
`opencode run` exits and continues the session with `opencode run --session <id> FEEDBACK`.
A missing binary fails this test, it never skips it."""

from __future__ import annotations

import json
import subprocess

import pytest
from codex_harness import BIN, FakeResponses, git_workspace
from opencode_harness import (
    MODEL,
    chat_request_text,
    opencode_binary,
    opencode_env,
    seed_plugin_sdk,
    write_opencode_config,
)
from do_harness import FEEDBACK, FILES, log_of, person_files, report, rounds, vacant_do
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e


def tool(name: str, match: str | None = None, **arguments) -> dict:
    turn = {"items": [{"type": "function", "name": name, "arguments": arguments}]}
    return {**turn, "match": match} if match else turn


def text(words: str, match: str | None = None) -> dict:
    turn = {"items": [{"type": "text", "text": words}]}
    return {**turn, "match": match} if match else turn


def test_planted_error_on_opencode(plain_scratch):
    scratch = plain_scratch
    files = {**FILES, "spec/rates.md": "The rate is 0.08.\n"}
    workspace = git_workspace(scratch.path / "ws", files).resolve()
    config = str(workspace / "config.py")
    turns = [
        tool("read", filePath=str(workspace / "spec" / "rates.md")),
        tool("bash", command="python3 check_value.py RATE config.py 0.08", description="check first"),
        tool("write", filePath=config, content="RATE = 0.09\n"),  # the planted error
        text("Done."),
        tool("edit", match=FEEDBACK, filePath=config, oldString="0.09", newString="0.08"),
        text("Fixed."),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        write_opencode_config(scratch.home, upstream.base_url)
        env = dict(opencode_env(scratch.home, workspace, scratch.vacant_home), TMPDIR=str(scratch.path / "tmp"))
        env["PWD"] = "/"  # stale on purpose: vacant do sets it to the project for OpenCode
        before = person_files(scratch, workspace)
        done = vacant_do(["--platform", "opencode", "--", str(opencode_binary()), "run", "set the rate in config.py"],
                         workspace, env)
        requests = upstream.requests()
    assert opencode_binary().exists()
    assert done.returncode == 0, done.stderr
    log = log_of(workspace)
    assert rounds(log) == [(1, "continue"), (2, "green")]

    starts = [r for r in log if r["type"] == "step_start" and r["tool"] != "oob"]
    assert [r["tool"] for r in starts] == ["read", "bash", "write", "edit"]
    assert all(r["actor"] == {"platform": "opencode", "agent_definition": "main", "model": MODEL,
                              "task_family": "config"} for r in starts)
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    assert ends[2]["outcome"] == "failed" and ends[2]["exit_code"] == 1  # the check's own exit code
    reads = [(r["origin"], r["ref"], r["step"]) for r in log if r["type"] == "read"]
    assert ("file", "spec/rates.md", 1) in reads and ("prompt", "user", None) in reads
    changes = {r["step"]: sorted({**r["added"], **r["changed"]}) for r in log if r["type"] == "change"}
    assert changes[3] == ["config.py"] and changes[4] == ["config.py"]

    first = report(workspace, 1)
    (finding,) = first["findings"]
    assert (finding["level"], finding["step"], finding["tool"], finding["path"]) == ("provable", 3, "write", "config.py")
    assert first["read_coverage"]["state"] == "partial"  # a bash step: reads inside it are invisible

    # the feedback reached the model as the next user message of the same session
    chats = [r for r in requests if r["body"].get("tools")]
    resumed = [r for r in chats if FEEDBACK in chat_request_text(r)]
    assert resumed and finding["id"] in chat_request_text(resumed[0])
    feedback = [r for r in log if r["type"] == "feedback"]
    assert len(feedback) == 1
    for identity in ("opencode", "fake-model", "fake/", "build"):
        assert identity not in feedback[0]["text"].lower()
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1

    final = report(workspace)
    assert final["findings"] == [] and final["decision"] == "stop"
    cells = json.loads(subprocess.run([str(BIN / "vacant"), "reputation", "--json"], cwd=workspace, env=env,
                                      capture_output=True, text=True, check=True).stdout)["cells"]
    (cell,) = cells
    assert (cell["platform"], cell["model"], cell["n"], cell["mean"]) == ("opencode", MODEL, 2, 0.5)

    assert person_files(scratch, workspace) == before
    assert not (workspace / ".opencode").exists()
    assert not (state_dir(workspace) / "errors.log").exists()


def test_installed_plugin_records_and_reports_at_idle(plain_scratch):
    """`vacant init --platform opencode` (no `vacant do`): the plugin records every step and the Stop
    pipeline reports at `session.idle`, claiming no feedback round (nothing could carry it)."""
    scratch = plain_scratch
    workspace = git_workspace(scratch.path / "ws", FILES).resolve()
    seed_plugin_sdk(workspace / ".opencode")  # a project OpenCode has run in before: no SDK install to wait for
    turns = [tool("write", filePath=str(workspace / "config.py"), content="RATE = 0.09\n"), text("Done.")]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        write_opencode_config(scratch.home, upstream.base_url)
        env = opencode_env(scratch.home, workspace, scratch.vacant_home)
        vacant = [str(BIN / "vacant")]
        installed = subprocess.run([*vacant, "init", "--platform", "opencode"], cwd=workspace, env=env,
                                   capture_output=True, text=True)
        assert installed.returncode == 0, installed.stderr
        plugin = workspace / ".opencode" / "plugins" / "vacant.js"
        assert plugin.is_file()
        doctor = subprocess.run([*vacant, "doctor", "--platform", "opencode"], cwd=workspace, env=env,
                                capture_output=True, text=True)
        assert doctor.returncode == 0, doctor.stdout
        ran = subprocess.run([str(opencode_binary()), "run", "set the rate"], cwd=workspace, env=env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    # the report is written before `opencode run` returns (OpenCode does not await a plugin's event
    # handler: the plugin's idle hook holds it), so a `vacant report` right after it never races
    assert list((state_dir(workspace) / "runs").glob("*/report.json")), "opencode run exited before the Stop report"
    log = log_of(workspace)
    assert [r["tool"] for r in log if r["type"] == "step_start"] == ["write"]
    (finding,) = report(workspace)["findings"]
    assert (finding["level"], finding["step"], finding["actor"]["model"]) == ("provable", 1, MODEL)
    assert report(workspace)["decision"] == "stop" and [r for r in log if r["type"] == "feedback"] == []
    removed = subprocess.run([*vacant, "uninstall", "--platform", "opencode"], cwd=workspace, env=env,
                             capture_output=True, text=True)
    assert removed.returncode == 0 and not plugin.exists()
    assert not (state_dir(workspace) / "errors.log").exists()
