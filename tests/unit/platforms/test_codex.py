"""Codex platform module: the real payloads and transcript items, patch paths, rendering,
install/trust/uninstall (offline path; the app-server path runs in tests/e2e)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vacant.core.locations import state_dir
import tomllib

from vacant.core.calls import Response
from vacant.platforms import settings_file
from vacant.platforms.all_platforms import load
from vacant.platforms.codex import appserver as codex_appserver
from vacant.platforms.codex import payloads as codex_payloads
from vacant.platforms.codex import platform as codex_platform
from vacant.platforms.codex import schema as codex_schema
from vacant.platforms.codex import trust as codex_trust
from vacant.platforms.settings_file import hook_command

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures" / "payloads"
PAYLOADS = json.loads((FIXTURES / "codex-hook_payloads.json").read_text())["payloads"]
ITEMS = json.loads((FIXTURES / "codex-transcript_items.json").read_text())["lines"]
HOOKS_LIST = json.loads((FIXTURES / "codex-hooks_list.json").read_text())
CMD = hook_command("codex")  # a command that can start here: doctor checks it


def _name(index: int, payload: dict) -> str:
    return f"{index:02d}:{payload['hook_event_name']}:{payload.get('tool_name') or ''}"


NAMES = [_name(i, p) for i, p in enumerate(PAYLOADS)]


@pytest.fixture(autouse=True)
def isolated(isolated_home, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex_home"))
    monkeypatch.setenv("VACANT_CODEX_BIN", str(tmp_path / "no-codex-here"))  # the offline path


@pytest.fixture
def ws_files() -> dict:
    return {".vacant": None, "a.txt": "hello\n", "src/m.py": "l1\nl2\nl3\n", "img.png": b"\x89PNG fake"}


@pytest.fixture
def ws(ws, monkeypatch) -> Path:
    """The captured session's workspace, recreated as it was when the calls ran; cwd = ws."""
    transcript = ws.parent / "rollout.jsonl"
    lines = [json.dumps(line).replace("<ws>", str(ws)) for line in ITEMS]
    transcript.write_text("".join(line + "\n" for line in lines))
    monkeypatch.chdir(ws)
    return ws


def payload(ws: Path, name: str) -> dict:
    text = json.dumps(PAYLOADS[NAMES.index(name)])
    text = text.replace("<ws>", str(ws)).replace("<transcript>", str(ws.parent / "rollout.jsonl"))
    return json.loads(text)


def parse(ws: Path, name: str):
    return codex_platform.PLATFORM.parse(payload(ws, name), {})


def find(event: str, tool: str = "", nth: int = 0) -> str:
    return [n for n in NAMES if n.split(":", 1)[1] == f"{event}:{tool}"][nth]


# -- payloads -----------------------------------------------------------------------------------


def test_loader_finds_the_module():
    assert load("codex") is codex_platform.PLATFORM
    assert (codex_platform.PLATFORM.name, codex_platform.PLATFORM.cell_platform) == ("codex", "codex")


@pytest.mark.parametrize("name", NAMES)
def test_every_real_payload_parses(ws, name):
    raw = PAYLOADS[NAMES.index(name)]
    call = parse(ws, name)
    assert call.kind == codex_payloads.EVENT_KINDS[raw["hook_event_name"]]
    assert call.session_id == raw["session_id"]
    assert call.workspace == ws
    expected_model = None if raw["hook_event_name"] in ("SessionStart", "SessionEnd") else "gpt-5.5"
    assert call.model == expected_model
    if call.kind in ("tool_pre", "tool_post"):
        assert call.key == raw["tool_use_id"] and call.tool == raw["tool_name"]


def test_workspace_is_the_hook_cwd_not_the_tool_workdir(ws, monkeypatch):
    call = parse(ws, find("PreToolUse", "Bash", 1))  # sed with workdir src
    assert call.workspace == ws
    monkeypatch.chdir(ws / "src")  # a session started in a subdirectory: the nearest .vacant/ wins
    assert parse(ws, find("PreToolUse", "Bash", 1)).workspace == ws


def test_session_events(ws):
    start = parse(ws, find("SessionStart"))
    assert (start.kind, start.source) == ("session_start", "startup")
    prompt = parse(ws, find("UserPromptSubmit"))
    assert [(r.origin, r.ref, r.content) for r in prompt.reads] == [("prompt", "user", "fix a.txt")]
    stop = parse(ws, find("Stop"))
    assert (stop.kind, stop.stop_hook_active) == ("stop", False)
    end = parse(ws, find("SessionEnd"))
    assert (end.kind, end.reason) == ("session_end", "other")


def test_tool_scopes(ws):
    assert parse(ws, find("PreToolUse", "Bash")).scope is None
    assert parse(ws, find("PreToolUse", "apply_patch")).scope == [str(ws / "b.txt")]
    assert parse(ws, find("PreToolUse", "apply_patch", 1)).scope == [
        str(ws / "src/new.py"), str(ws / "old.txt"), str(ws / "moved.txt"), str(ws / "b.txt")]
    assert parse(ws, find("PreToolUse", "view_image")).scope == []
    shell_patch = parse(ws, find("PreToolUse", "Bash", 3))
    assert shell_patch.tool_input["command"].startswith("apply_patch <<'EOF'") and shell_patch.scope is None
    assert codex_payloads.tool_scope("mcp__fs__write", {"path": "x"}, str(ws)) is None


def test_patch_paths():
    text = ("*** Begin Patch\n*** Add File: a/b.txt\n+x\n*** Update File: ../up.txt\n@@\n-a\n+b\n"
            "*** Update File: c.txt\n*** Move to: d/c.txt\n@@\n-a\n+b\n*** Delete File: /abs/gone.txt  \n"
            "*** Add File: a/b.txt\n+again\n*** End Patch\n")
    assert codex_payloads.patch_paths(text, "/ws/sub") == [
        "/ws/sub/a/b.txt", "/ws/up.txt", "/ws/sub/c.txt", "/ws/sub/d/c.txt", "/abs/gone.txt"]
    assert codex_payloads.patch_paths("no headers here", "/ws") is None  # unparsable: full scan
    assert codex_payloads.tool_scope("apply_patch", {"command": "garbage"}, "/ws") is None
    assert codex_payloads.tool_scope("apply_patch", "*** Add File: x\n+y\n", "/ws") == ["/ws/x"]


def test_shell_post_reads_and_exit_codes_come_from_the_transcript(ws):
    cat = parse(ws, find("PostToolUse", "Bash"))
    assert (cat.kind, cat.outcome, cat.exit_code) == ("tool_post", "ok", 0)
    # the file read carries no bytes: the recorder takes the file as the recorded state held it
    # before the step; the command's output is the command's own read
    assert [(r.origin, r.ref, r.content) for r in cat.reads] == [
        ("file", str(ws / "a.txt"), None), ("command", "cat a.txt", "hello\n")]
    sed = parse(ws, find("PostToolUse", "Bash", 1))  # workdir src: the path is relative to it
    assert [(r.origin, r.ref, r.content) for r in sed.reads] == [
        ("file", str(ws / "src/m.py"), None), ("command", "sed -n 2,3p m.py", "l2\nl3\n")]
    failed = parse(ws, find("PostToolUse", "Bash", 2))
    assert (failed.outcome, failed.exit_code) == ("failed", 3)
    assert [(r.origin, r.content) for r in failed.reads] == [("command", "to-stderr\nto-stdout\n")]


def test_patch_and_image_posts(ws):
    add = parse(ws, find("PostToolUse", "apply_patch"))
    assert (add.outcome, add.exit_code, add.reads) == ("ok", None, [])
    image = parse(ws, find("PostToolUse", "view_image"))
    assert (image.outcome, image.scope) == ("ok", [])
    assert [(r.origin, r.ref, r.content) for r in image.reads] == [("file", str(ws / "img.png"), b"\x89PNG fake")]


def test_no_transcript_record_means_unknown_outcome(ws):
    data = payload(ws, find("PostToolUse", "Bash", 2))
    data["transcript_path"] = str(ws / "absent.jsonl")
    call = codex_platform.PLATFORM.parse(data, {})
    assert (call.outcome, call.exit_code) == ("unknown", None)
    assert [(r.origin, r.content) for r in call.reads] == [("command", "to-stderr\nto-stdout\n")]
    patch = payload(ws, find("PostToolUse", "apply_patch"))
    patch["transcript_path"] = None
    assert codex_platform.PLATFORM.parse(patch, {}).outcome == "ok"  # "Exit code: 0" in the tool response
    patch["tool_response"] = "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror\n"
    assert codex_platform.PLATFORM.parse(patch, {}).outcome == "failed"


def test_transcript_item_reads_only_the_tail(tmp_path):
    transcript = tmp_path / "t.jsonl"
    item = {"type": "event_msg", "payload": {"type": "item_completed", "item": {"id": "call_1", "exit_code": 0}}}
    other = {"type": "event_msg", "payload": {"type": "item_completed", "item": {"id": "call_10", "exit_code": 5}}}
    transcript.write_text(json.dumps(item) + "\n" + "x" * 5000 + "\n{torn json call_1 item_completed\n"
                          + json.dumps(other) + "\n")
    assert codex_payloads.transcript_item(str(transcript), "call_1")["exit_code"] == 0
    assert codex_payloads.transcript_item(str(transcript), "call_10")["exit_code"] == 5
    assert codex_payloads.transcript_item(str(transcript), "call_1", tail=1000) is None  # beyond the bound
    assert codex_payloads.transcript_item(str(tmp_path / "absent"), "call_1") is None
    assert codex_payloads.transcript_item(None, "call_1") is None


def test_settled_needs_the_completion_and_the_output_the_model_got(tmp_path):
    """A call still open after Codex wrote both its item_completed and the output the model got
    (which comes after PostToolUse) will get no PostToolUse: apply_patch run through the shell."""
    shell_patch = next(line for line in ITEMS if line["payload"]["item"]["id"] == "call_resp_6_0")
    failed = {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "call_9", "status": "failed", "exit_code": 2}}}
    running = {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "call_8", "status": "completed", "exit_code": 0}}}

    def output(call_id: str, kind: str = "function_call_output") -> dict:
        return {"type": "response_item", "payload": {"type": kind, "call_id": call_id, "output": "..."}}

    transcript = tmp_path / "rollout.jsonl"
    lines = [shell_patch, output("call_resp_6_0"), failed, output("call_9", "custom_tool_call_output"), running]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    call = codex_platform.PLATFORM.parse({"hook_event_name": "Stop", "session_id": "s", "transcript_path": str(transcript)}, {})
    assert shell_patch["payload"]["item"]["status"] == "completed"
    # call_8's output is not written yet: its PostToolUse may still be running; call_7 is unknown
    assert codex_platform.PLATFORM.settled(call, ["call_resp_6_0", "call_9", "call_8", "call_7"]) == {
        "call_resp_6_0": ("ok", None), "call_9": ("failed", 2)}
    call.transcript_path = None
    assert codex_platform.PLATFORM.settled(call, ["call_resp_6_0"]) == {}


def test_file_reads_never_carry_the_commands_output(tmp_path):
    """Every file a command read is reported without bytes (the recorder resolves them from the
    recorded state: tests/unit/attribute/test_attribution_classes.py); the output is the command's own read."""
    (tmp_path / "one.txt").write_text("one\n")
    item = {"cwd": f"file://{tmp_path}", "aggregated_output": "one\ntwo\n", "parsed_cmd": [
        {"type": "read", "path": "one.txt"}, {"type": "read", "path": "two.txt"},
        {"type": "read", "path": "missing.txt"}, {"type": "list_files", "path": None}]}
    reads = codex_payloads.command_reads(item, "cat one.txt two.txt missing.txt", None, "/elsewhere")
    assert [(r.origin, r.ref, r.content) for r in reads] == [
        ("file", str(tmp_path / "one.txt"), None), ("file", str(tmp_path / "two.txt"), None),
        ("file", str(tmp_path / "missing.txt"), None), ("command", "cat one.txt two.txt missing.txt", "one\ntwo\n")]
    single = {"parsed_cmd": [{"type": "read", "path": "one.txt"}]}  # no output recorded
    assert [(r.ref, r.content) for r in codex_payloads.command_reads(single, "cat one.txt", None, str(tmp_path))] == [
        (str(tmp_path / "one.txt"), None)]


def test_render_contracts(ws):
    pre, stop = parse(ws, find("PreToolUse", "Bash")), parse(ws, find("Stop"))
    out, code = codex_platform.PLATFORM.render(pre, Response("deny", "no"))
    assert code == 0 and json.loads(out) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}
    out, code = codex_platform.PLATFORM.render(stop, Response("block", "fix a.py:3"))
    assert code == 0 and json.loads(out) == {"decision": "block", "reason": "fix a.py:3"}
    assert codex_platform.PLATFORM.render(stop, Response()) == ("", 0)
    assert codex_platform.PLATFORM.render(pre, Response()) == ("", 0)
    assert codex_platform.PLATFORM.render(pre, Response("block", "x")) == ("", 0)  # block only means Stop
    out, _ = codex_platform.PLATFORM.render(stop, Response(system_message="3 findings"))
    assert json.loads(out) == {"systemMessage": "3 findings"}


PROBE = """
import sys, json
before = set(sys.modules)
from vacant.hook.call import run
print(run("codex", sys.stdin.buffer.read(), {}), file=sys.stderr)
extra = sorted({m.split(".")[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names)
               - {"vacant", "xxhash", "_xxhash"})
heavy = sorted(m for m in sys.modules if m in ("tomllib", "subprocess", "typing", "dataclasses")
               or m.split(".")[0] in ("pydantic", "typer", "rich", "click"))
print(json.dumps([extra, heavy]))
"""


def test_hot_path_imports_only_stdlib_and_xxhash(ws):
    data = payload(ws, find("PostToolUse", "Bash"))
    proc = subprocess.run([sys.executable, "-I", "-c", PROBE], input=json.dumps(data).encode(), cwd=ws,
                          capture_output=True, check=True)
    extra, heavy = json.loads(proc.stdout)
    assert extra == [] and heavy == []
    assert not (state_dir(ws) / "errors.log").exists()


# -- install / trust / uninstall (offline) -------------------------------------------------------


def config_file(tmp_path: Path) -> Path:
    return tmp_path / "codex_home" / "config.toml"


def test_hash_matches_what_codex_itself_lists():
    hooks = HOOKS_LIST["hooks_json"]["hooks"]
    snake = {v: k for k, v in codex_payloads.SNAKE.items()}
    for listed in HOOKS_LIST["listed"]:
        _, event, group, handler = listed["key"].rsplit(":", 3)
        entry = hooks[snake[event]][int(group)]
        assert codex_trust.hook_hash(snake[event], entry.get("matcher"), entry["hooks"][int(handler)]) == listed["currentHash"]


def test_install_project_writes_hooks_and_trust(tmp_path, ws):
    target = codex_platform.PLATFORM.install(ws, "project", CMD)
    assert target == ws / ".codex" / "hooks.json"
    settings = json.loads(target.read_text())
    assert codex_schema.validate_hooks(settings) == []
    assert list(settings["hooks"]) == list(codex_payloads.INSTALL_EVENTS)
    handlers = {e: g[0]["hooks"][0] for e, g in settings["hooks"].items()}
    assert all("matcher" not in g[0] for g in settings["hooks"].values())
    assert {e: h["timeout"] for e, h in handlers.items()} == {
        "SessionStart": 120, "UserPromptSubmit": 30, "PreToolUse": 60, "PostToolUse": 60, "Stop": 600,
        "SessionEnd": 3}
    assert {h["command"] for h in handlers.values()} == {CMD}
    config = tomllib.loads(config_file(tmp_path).read_text())
    assert config["projects"][str(ws)] == {"trust_level": "trusted"}
    state = config["hooks"]["state"]
    assert sorted(state) == sorted(f"{target}:{codex_payloads.SNAKE[e]}:0:0" for e in codex_payloads.INSTALL_EVENTS)
    assert {k: v["trusted_hash"] for k, v in state.items()} == codex_trust.our_hooks(target)
    report = {name: (status, detail) for name, status, detail in codex_platform.PLATFORM.doctor(ws, CMD)}
    assert all(status == "ok" for status, _ in report.values()), report
    assert "6 of 6 vacant hooks trusted" in report["hooks would fire"][1]


def test_local_is_project_and_user_scope_goes_to_codex_home(tmp_path, ws):
    assert codex_platform.PLATFORM.install(ws, "local", CMD) == ws / ".codex" / "hooks.json"
    codex_platform.PLATFORM.uninstall(ws, "local")
    target = codex_platform.PLATFORM.install(ws, "user", CMD)
    assert target == tmp_path / "codex_home" / "hooks.json"
    config = tomllib.loads(config_file(tmp_path).read_text())
    assert "projects" not in config  # user hooks need no project trust
    assert len(config["hooks"]["state"]) == 6
    with pytest.raises(ValueError):
        codex_platform.PLATFORM.hooks_path(ws, "global")


USER_CONFIG = textwrap.dedent("""\
    # my codex config
    model = "gpt-5.5"   # keep this comment

    [projects."/somewhere/else"]
    trust_level = "trusted"

    [hooks.state."/somewhere/else/.codex/hooks.json:stop:0:0"]
    trusted_hash = "sha256:abc"
    """)
USER_HOOKS = (b'{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
              b'[{"type": "command", "command": "lint.sh", "timeout": 5}]}]}}\n')


def platform_backups(tmp_path: Path) -> list[str]:
    """What the platform left in the install directory. The workspace's own registry entry
    (`ws-*.json`) is the uninstall command's to remove, not the platform's."""
    return sorted(name for name in os.listdir(tmp_path / "data" / "installs") if not name.startswith("ws-"))


def test_install_merges_is_idempotent_and_uninstall_restores_bytes(tmp_path, ws):
    config = config_file(tmp_path)
    config.parent.mkdir(parents=True)
    config.write_text(USER_CONFIG)
    hooks = ws / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_bytes(USER_HOOKS)
    codex_platform.PLATFORM.install(ws, "project", CMD)
    once = (hooks.read_bytes(), config.read_bytes())
    codex_platform.PLATFORM.install(ws, "project", CMD)
    assert (hooks.read_bytes(), config.read_bytes()) == once  # running it twice changes nothing
    settings = json.loads(once[0])
    assert [h["command"] for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]] == ["lint.sh", CMD]
    state = tomllib.loads(once[1].decode())["hooks"]["state"]
    assert f"{hooks}:pre_tool_use:1:0" in state  # ours is the second group: the key says so
    assert f"{hooks}:pre_tool_use:0:0" not in state  # the person's own hook is not trusted by us
    assert once[1].decode().startswith(USER_CONFIG)  # appended, nothing rewritten
    assert codex_platform.PLATFORM.uninstall(ws, "project") == hooks
    assert hooks.read_bytes() == USER_HOOKS
    assert config.read_text() == USER_CONFIG
    assert platform_backups(tmp_path) == []
    assert codex_platform.PLATFORM.uninstall(ws, "project") is None


def test_uninstall_removes_created_files_and_directory(tmp_path, ws):
    codex_platform.PLATFORM.install(ws, "project", CMD)
    assert config_file(tmp_path).exists()
    codex_platform.PLATFORM.uninstall(ws, "project")
    assert not config_file(tmp_path).exists()
    assert not (ws / ".codex").exists()


def test_uninstall_keeps_what_the_person_changed_since(tmp_path, ws):
    config = config_file(tmp_path)
    config.parent.mkdir(parents=True)
    config.write_text(USER_CONFIG)
    codex_platform.PLATFORM.install(ws, "project", CMD)
    config.write_text(config.read_text() + '\n[features]\nweb_search = true\n')
    codex_platform.PLATFORM.uninstall(ws, "project")
    assert config.read_text() == USER_CONFIG + '\n[features]\nweb_search = true\n'


def test_trust_the_project_already_had_stays(tmp_path, ws):
    config = config_file(tmp_path)
    config.parent.mkdir(parents=True)
    original = f'[projects."{ws}"]\ntrust_level = "trusted"\n'
    config.write_text(original)
    codex_platform.PLATFORM.install(ws, "project", CMD)
    assert config.read_text().count("[projects.") == 1
    codex_platform.PLATFORM.uninstall(ws, "project")
    assert config.read_text() == original


def test_explicitly_untrusted_project_is_refused_untouched(tmp_path, ws):
    config = config_file(tmp_path)
    config.parent.mkdir(parents=True)
    config.write_text(f'[projects."{ws}"]\ntrust_level = "untrusted"\n')
    before = config.read_bytes()
    with pytest.raises(settings_file.InstallError, match="untrusted"):
        codex_platform.PLATFORM.install(ws, "project", CMD)
    assert config.read_bytes() == before and not (ws / ".codex").exists()


def test_a_changed_hook_command_is_trusted_again(tmp_path, ws):
    codex_platform.PLATFORM.install(ws, "project", CMD)
    other = "/other/venv/bin/python /other/venv/bin/vacant-hook codex"
    codex_platform.PLATFORM.install(ws, "project", other)
    target = ws / ".codex" / "hooks.json"
    config = tomllib.loads(config_file(tmp_path).read_text())
    assert {k: v["trusted_hash"] for k, v in config["hooks"]["state"].items()} == codex_trust.our_hooks(target)
    assert len(config["hooks"]["state"]) == 6
    report = {name: status == "ok" for name, status, _ in codex_platform.PLATFORM.doctor(ws, CMD)}
    assert report["hook command"] is False and report["hooks would fire"] is True
    codex_platform.PLATFORM.uninstall(ws, "project")
    assert not config_file(tmp_path).exists()


def test_doctor_says_when_hooks_would_not_fire(tmp_path, ws):
    codex_platform.PLATFORM.install(ws, "project", CMD)
    config = config_file(tmp_path)
    text = config.read_text()
    config.write_text(text.split("\n[hooks.state.")[0] + '\n[features]\nhooks = false\n')
    report = {name: (status == "ok", detail) for name, status, detail in codex_platform.PLATFORM.doctor(ws, CMD)}
    assert report["hooks would fire"][0] is False and "0 of 6" in report["hooks would fire"][1]
    assert report["features.hooks"][0] is False
    assert report["project trust"][0] is True
    config.write_text("")
    report = {name: (status == "ok", detail) for name, status, detail in codex_platform.PLATFORM.doctor(ws, CMD)}
    assert report["project trust"][0] is False and "codex exec --trust" in report["project trust"][1]
    assert {name: status == "ok" for name, status, _ in codex_platform.PLATFORM.doctor(tmp_path / "elsewhere", CMD)} == {"hooks installed": False}


@pytest.mark.parametrize("bad, message", [
    ({"hooks": {"Stop": [{"hooks": [{"type": "cmd", "command": "x"}]}]}}, "type is 'cmd'"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 1.5}]}]}}, "whole number"),
    ({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}, "not a valid regex"),
    ({"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}, "regex string"),
    ({"hooks": {"Stop": {"hooks": []}}}, "must be a list"),
])
def test_install_refuses_a_file_codex_would_reject(tmp_path, ws, bad, message):
    target = ws / ".codex" / "hooks.json"
    target.parent.mkdir()
    target.write_text(json.dumps(bad))
    before = target.read_bytes()
    with pytest.raises(settings_file.InstallError, match=message):
        codex_platform.PLATFORM.install(ws, "project", CMD)
    assert target.read_bytes() == before
    assert not config_file(tmp_path).exists()


def test_offline_trust_refuses_a_config_it_cannot_extend(tmp_path, ws):
    config = config_file(tmp_path)
    config.parent.mkdir(parents=True)
    config.write_text('hooks = { state = {} }\n')  # an inline table: no [hooks.state."…"] can follow
    with pytest.raises(settings_file.InstallError):
        codex_platform.PLATFORM.install(ws, "project", CMD)
    assert config.read_text() == 'hooks = { state = {} }\n'


def test_remove_sections_takes_only_single_key_tables():
    text = 'a = 1\n\n[X]\nk = "1"\n\n[Y]\nk = "2"\nother = 3\n\n[Z]\nk = "3"\n'
    assert codex_trust._remove_sections(text, {"[X]": "k", "[Y]": "k", "[Z]": "k"}) == 'a = 1\n\n[Y]\nk = "2"\nother = 3\n'


# -- the app-server client, against a stand-in ---------------------------------------------------

FAKE_APP_SERVER = r'''
import json, sys, time
mode = sys.argv[2]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if mode == "hang" and msg["method"] != "initialize":
        time.sleep(30)
    print(json.dumps({"method": "configWarning", "params": {"summary": "noise"}}), flush=True)
    if msg["method"] == "hooks/list" and mode == "error":
        print(json.dumps({"id": msg["id"], "error": {"code": -1, "message": "nope"}}), flush=True)
    elif msg["method"] == "hooks/list":
        print(json.dumps({"id": msg["id"], "result": {"data": [{"cwd": msg["params"]["cwds"][0], "hooks": [
            {"key": "k", "currentHash": "sha256:1", "trustStatus": "trusted"}]}]}}), flush=True)
    else:
        print(json.dumps({"id": msg["id"], "result": {}}), flush=True)
'''


def fake_codex(tmp_path: Path, mode: str) -> str:
    script = tmp_path / "fake_app_server.py"
    script.write_text(FAKE_APP_SERVER)
    binary = tmp_path / f"codex-{mode}"
    binary.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\" {mode}\n")
    binary.chmod(0o755)
    return str(binary)


def test_app_server_client_skips_notifications_and_reports_errors(tmp_path):
    with codex_appserver.AppServer(fake_codex(tmp_path, "ok"), tmp_path) as server:
        assert server.hooks(tmp_path) == [{"key": "k", "currentHash": "sha256:1", "trustStatus": "trusted"}]
        server.write([("hooks.state.\"k\".trusted_hash", "sha256:1")])
    with codex_appserver.AppServer(fake_codex(tmp_path, "error"), tmp_path) as server:
        with pytest.raises(codex_appserver.AppServerError, match="nope"):
            server.hooks(tmp_path)
    with codex_appserver.AppServer(fake_codex(tmp_path, "hang"), tmp_path) as server:
        server.timeout = 0.5  # after initialize: a loaded machine may take longer to start the stand-in
        with pytest.raises(codex_appserver.AppServerError, match="in time"):
            server.hooks(tmp_path)
    with pytest.raises(codex_appserver.AppServerError):
        codex_appserver.AppServer(str(tmp_path / "absent"), tmp_path)


def test_a_failing_app_server_falls_back_to_offline_trust(tmp_path, ws, monkeypatch):
    monkeypatch.setenv("VACANT_CODEX_BIN", fake_codex(tmp_path, "error"))
    target = codex_platform.PLATFORM.install(ws, "project", CMD)
    state = tomllib.loads(config_file(tmp_path).read_text())["hooks"]["state"]
    assert {k: v["trusted_hash"] for k, v in state.items()} == codex_trust.our_hooks(target)
    monkeypatch.setenv("VACANT_CODEX_BIN", str(tmp_path / "none"))
    codex_platform.PLATFORM.uninstall(ws, "project")
    assert not config_file(tmp_path).exists()
    assert platform_backups(tmp_path) == []


def test_the_walls_network_follows_the_persons_own_codex_policy(tmp_path, monkeypatch):
    """What the gate lets a READ reach, Codex's wall lets through (`network.enabled`), unless the
    person's own config already says whether commands reach the network: then theirs decides."""
    from vacant.core.wall import Wall
    from vacant.platforms.codex import wall as codex_wall

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / "codex").mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    network = f"[permissions.{codex_wall._quote(codex_wall.PROFILE)}.network]\nenabled = true\n"
    assert network in codex_wall.sandbox_settings(root, Wall([], []))[1]
    for policy in ("[sandbox_workspace_write]\nnetwork_access = false\n", "[permissions.mine.network]\nenabled = false\n"):
        (tmp_path / "codex" / "config.toml").write_text(policy)
        assert network not in codex_wall.sandbox_settings(root, Wall([], []))[1], policy
