"""Claude Code platform module: the 79 real payloads, rendering, install/uninstall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.core.calls import Response
from vacant.platforms import claude, settings_file
from vacant.platforms.settings_file import hook_command

ROOT = Path(__file__).resolve().parents[3]
PAYLOADS = json.loads((ROOT / "fixtures/payloads/claude-code-hook_payloads.json").read_text())
WS = "/work/ws"

pytestmark = pytest.mark.usefixtures("isolated_home")


def payload(name: str) -> dict:
    return json.loads(json.dumps(PAYLOADS[name]["stdin"]).replace("<ws>", WS))


def parse(name: str, env: dict | None = None):
    return claude.PLATFORM.parse(payload(name), env or {"CLAUDE_PROJECT_DIR": WS})


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_every_real_payload_parses(name):
    event = PAYLOADS[name]["stdin"]["hook_event_name"]
    call = parse(name)
    assert call.kind == claude.EVENT_KINDS.get(event, "ignore")
    assert call.session_id == PAYLOADS[name]["stdin"]["session_id"]
    assert str(call.workspace) == WS


def test_workspace_comes_from_project_dir_not_cwd():
    data = payload("PreToolUse:Write")
    data["cwd"] = WS + "/sub"  # the session did `cd sub`
    assert str(claude.PLATFORM.parse(data, {"CLAUDE_PROJECT_DIR": WS}).workspace) == WS


def test_tool_scopes():
    assert parse("PreToolUse:Write").scope == [WS + "/hello.py"]
    assert parse("PreToolUse:Edit").scope == [WS + "/hello.py"]
    assert parse("PreToolUse:Read").scope == []
    assert parse("PreToolUse:Bash").scope is None
    assert parse("PreToolUse:Agent [subagent-run]").scope == []
    assert parse("PreToolUse:TaskCreate").scope == []


def test_failure_payload_gives_exit_code_and_output():
    call = parse("PostToolUseFailure:Bash:fail")
    assert (call.kind, call.outcome, call.exit_code) == ("tool_post", "failed", 3)
    assert call.reads[0].origin == "command" and "to-stderr" in call.reads[0].content
    missing = parse("PostToolUseFailure:Read:fail [default-permission-mode]")
    assert (missing.outcome, missing.exit_code, missing.reads) == ("failed", None, [])


def test_reads_by_tool():
    read = parse("PostToolUse:Read").reads[0]
    assert (read.origin, read.ref, read.content) == ("file", WS + "/hello.py", "print('world')\n")
    bash = parse("PostToolUse:Bash").reads[0]
    assert (bash.origin, bash.content) == ("command", "world")
    agent = parse("PostToolUse:Agent [subagent-run]")
    assert agent.reads[0].origin == "subagent"
    assert all("[" not in model for model in agent.models.values())


def test_subagent_identity_and_batch():
    inside = parse("PreToolUse:Write@subagent [subagent-run]")
    assert inside.agent_id and inside.agent_type == "general-purpose"
    batch = parse("PostToolBatch [parallel-run]")
    assert len(batch.batch) == 6 and batch.batch[0].key == "toolu_fake0001"


def test_model_from_transcript_tail(tmp_path):
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"content": "x"}},
             {"type": "assistant", "message": {"model": "claude-opus-4-8", "content": []}},
             {"type": "assistant", "message": {"model": "<synthetic>", "content": []}}]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert claude.transcript_model(str(transcript)) == "claude-opus-4-8"
    assert claude.transcript_model(str(tmp_path / "absent.jsonl")) is None


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(late_ms=st.integers(0, 200), subagent=st.booleans())
def test_a_stop_waits_for_the_transcripts_first_model_line(late_ms, subagent, tmp_path_factory):
    """Claude flushes its transcripts late: a Stop (or a sub-agent's) whose transcript exists but
    names no model yet waits for the line, so the review goes to the agent's own cell."""
    import threading
    import time

    transcript = tmp_path_factory.mktemp("t") / "agent.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "go"}}) + "\n")
    name = "SubagentStop@subagent:stop_hook_active=False [subagent-run]" if subagent else "Stop:stop_hook_active=False"
    data = payload(name)
    data["agent_transcript_path" if subagent else "transcript_path"] = str(transcript)
    line = json.dumps({"type": "assistant", "message": {"model": "claude-haiku-4-5", "content": []}}) + "\n"
    writer = threading.Timer(late_ms / 1000, lambda: transcript.open("a").write(line))
    started = time.monotonic()
    writer.start()
    try:
        call = claude.PLATFORM.parse(data, {"CLAUDE_PROJECT_DIR": WS})
    finally:
        writer.join()
    assert call.model == "claude-haiku-4-5" and time.monotonic() - started < late_ms / 1000 + 0.3


def test_a_stop_without_a_transcript_does_not_wait():
    import time

    data = payload("Stop:stop_hook_active=False")
    data["transcript_path"] = "/nonexistent/t.jsonl"
    started = time.monotonic()
    assert claude.PLATFORM.parse(data, {"CLAUDE_PROJECT_DIR": WS}).model is None
    assert time.monotonic() - started < 0.2


def test_render_contracts():
    pre, stop = parse("PreToolUse:Bash"), parse("Stop:stop_hook_active=False")
    out, code = claude.PLATFORM.render(pre, Response("deny", "no"))
    assert code == 0 and json.loads(out)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}
    out, _ = claude.PLATFORM.render(stop, Response("block", "fix a.py:3"))
    assert json.loads(out) == {"decision": "block", "reason": "fix a.py:3"}
    assert claude.PLATFORM.render(stop, Response()) == ("", 0)


# -- install / uninstall ---------------------------------------------------------------------

CMD = hook_command("claude")  # a command that can start here: doctor checks it


def test_install_creates_valid_settings_and_uninstall_removes_created_file(tmp_path):
    target = claude.PLATFORM.install(tmp_path, "local", CMD)
    assert target == tmp_path / ".claude" / "settings.local.json"
    settings = json.loads(target.read_text())
    assert claude.PLATFORM.validate_settings(settings) == []
    assert set(settings["hooks"]) == set(claude.EVENT_KINDS)
    timeouts = {e: g[0]["hooks"][0].get("timeout") for e, g in settings["hooks"].items()}
    assert timeouts["PreToolUse"] == 60 and timeouts["Stop"] == 600 and timeouts["SessionEnd"] is None
    assert claude.PLATFORM.uninstall(tmp_path, "local") == target
    assert not target.exists()


def test_install_merges_is_idempotent_and_uninstall_restores_bytes(tmp_path):
    target = tmp_path / ".claude" / "settings.json"
    target.parent.mkdir()
    original = (b'{\n    "model": "opus",\n    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
                b'[{"type": "command", "command": "lint.sh", "timeout": 5}]}]}\n}\n')
    target.write_bytes(original)
    claude.PLATFORM.install(tmp_path, "project", CMD)
    once = target.read_bytes()
    claude.PLATFORM.install(tmp_path, "project", CMD)
    assert target.read_bytes() == once  # running it twice changes nothing
    settings = json.loads(once)
    assert settings["model"] == "opus"
    commands = [h["command"] for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands == ["lint.sh", CMD]
    claude.PLATFORM.uninstall(tmp_path, "project")
    assert target.read_bytes() == original


def test_uninstall_keeps_what_the_person_changed_since(tmp_path):
    target = claude.PLATFORM.install(tmp_path, "local", CMD)
    settings = json.loads(target.read_text())
    settings["env"] = {"X": "1"}
    target.write_text(json.dumps(settings))
    claude.PLATFORM.uninstall(tmp_path, "local")
    assert json.loads(target.read_text()) == {"env": {"X": "1"}}


def test_user_scope_goes_to_home(tmp_path):
    target = claude.PLATFORM.install(tmp_path / "ws", "user", CMD)
    assert target == tmp_path / "home" / ".claude" / "settings.json"


@pytest.mark.parametrize("bad, message", [
    ({"hooks": {"Stop": [{"hooks": [{"type": "cmd", "command": "x"}]}]}}, "type is 'cmd'"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}}, "timeout"),
    ({"hooks": {"Stop": {"hooks": []}}}, "must be a list"),
])
def test_install_refuses_to_write_a_file_claude_would_drop(tmp_path, bad, message):
    target = tmp_path / ".claude" / "settings.local.json"
    target.parent.mkdir()
    target.write_text(json.dumps(bad))
    before = target.read_bytes()
    with pytest.raises(settings_file.InstallError, match=message):
        claude.PLATFORM.install(tmp_path, "local", CMD)
    assert target.read_bytes() == before


def test_invalid_json_is_refused_untouched(tmp_path):
    target = tmp_path / ".claude" / "settings.local.json"
    target.parent.mkdir()
    target.write_text("{oops")
    with pytest.raises(settings_file.InstallError, match="not valid JSON"):
        claude.PLATFORM.install(tmp_path, "local", CMD)
    assert target.read_text() == "{oops"


def test_doctor_reports_disabled_hooks_and_permission_trap(tmp_path):
    target = claude.PLATFORM.install(tmp_path, "local", CMD)
    settings = json.loads(target.read_text())
    settings["disableAllHooks"] = True
    target.write_text(json.dumps(settings))
    report = {name: (status == "ok", detail) for name, status, detail in claude.PLATFORM.doctor(tmp_path, CMD)}
    assert report[f"{target} disableAllHooks"][0] is False
    assert report["permission mode"][0] is False and "acceptEdits" in report["permission mode"][1]
    assert report["hooks installed"][0] is True
