"""Gemini CLI: the payloads captured from the real binary (fixtures/payloads/gemini/) replayed
through the recorder, every tool step paired Before/After by the call itself (no tool id on the
wire) with its reads and outcome; deny for BeforeTool and AfterAgent; its tools on the core's
closed kinds; doctor's trusted-folder check; the driver's system settings file and resume line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.calls import Response
from vacant.core.locations import state_dir
from vacant.platforms import gemini
from vacant.record.recorder import Recorder
from vacant.store.run import RunView

CAPTURED = json.loads((Path(__file__).resolve().parents[3] / "fixtures" / "payloads" / "gemini" /
                       "hook_payloads.json").read_text())
PLATFORM = gemini.PLATFORM

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {"a.txt": "hello\n"}


def payloads(ws: Path) -> list[dict]:
    text = json.dumps(CAPTURED["payloads"]).replace("<ws>", str(ws)).replace("<home>", str(ws.parent / "home"))
    items = json.loads(text)
    return [item.get("stdin", item) for item in (items.values() if isinstance(items, dict) else items)]


def env(ws: Path) -> dict[str, str]:
    return {"GEMINI_PROJECT_DIR": str(ws), "CLAUDE_PROJECT_DIR": str(ws)}


EFFECTS = {"write_file": lambda ws: (ws / "hello.py").write_text("print('hello')\n"),
           "replace": lambda ws: (ws / "hello.py").write_text("print('world')\n")}


def replay(ws: Path, items: list[dict]) -> RunView:
    session = items[0]["session_id"]
    for payload in items:
        if payload["hook_event_name"] == "AfterTool" and payload["tool_name"] in EFFECTS:
            EFFECTS[payload["tool_name"]](ws)
        Recorder(ws, session, PLATFORM).handle(PLATFORM.parse(payload, env(ws)))
    return RunView.load(state_dir(ws) / "runs" / session)


def test_the_captured_session_records_every_tool_step_paired_with_its_reads(ws):
    items = payloads(ws)
    befores = [p for p in items if p["hook_event_name"] == "BeforeTool"]
    afters = [p for p in items if p["hook_event_name"] == "AfterTool"]
    view = replay(ws, items)
    steps = view.ordered()
    # the oracle: the captured run's own Before/After events, in order (the denied push got no After)
    assert [s.tool for s in steps] == [p["tool_name"] for p in befores]
    closed = [s for s in steps if s.outcome != "not-run"]
    assert [s.tool for s in closed] == [p["tool_name"] for p in afters]
    by_tool = {s.tool: s for s in steps}
    assert by_tool["write_file"].changed_paths() == ["hello.py"] and by_tool["replace"].changed_paths() == ["hello.py"]
    shells = [s for s in steps if s.tool == "run_shell_command" and s.outcome != "not-run"]
    assert [(s.outcome, s.exit_code) for s in shells] == [("ok", 0), ("failed", 3)]
    assert [r.get("origin") for r in by_tool["read_file"].reads] == ["file"]
    assert steps[0].actor["platform"] == "gemini-cli"
    assert [r["type"] for r in view.records][-1] == "run_end"


def test_the_stop_feedback_came_back_as_the_next_prompt(ws):
    items = payloads(ws)
    stops = [p for p in items if p["hook_event_name"] == "AfterAgent"]
    assert [s["stop_hook_active"] for s in stops[-2:]] == [False, True]
    calls = [PLATFORM.parse(p, env(ws)) for p in items]
    prompt = [c for c in calls[:items.index(stops[-1])] if c.kind == "prompt"][-1]
    assert prompt.kind == "prompt" and prompt.reads[0].content == "FIX-THIS-NOW at a.txt:1"
    assert calls[items.index(stops[-1])].stop_hook_active


# (no booleans: Python holds False == 0, JSON does not)
json_values = st.recursive(st.none() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(tool=st.sampled_from(["run_shell_command", "write_file", "replace", "read_file", "mcp_x"]),
       first=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
       second=st.dictionaries(st.text(max_size=6), json_values, max_size=4))
def test_before_and_after_pair_exactly_when_they_name_the_same_call(tool, first, second):
    before = PLATFORM.parse({"hook_event_name": "BeforeTool", "session_id": "s", "tool_name": tool,
                             "tool_input": first}, {"GEMINI_PROJECT_DIR": "/w"})
    # the After re-serialised with its keys in another order: still the same call
    after = PLATFORM.parse({"hook_event_name": "AfterTool", "session_id": "s", "tool_name": tool,
                            "tool_input": json.loads(json.dumps(dict(reversed(list(second.items())))))},
                           {"GEMINI_PROJECT_DIR": "/w"})
    assert (before.key == after.key) == (first == second)


def test_deny_is_the_decision_of_before_tool_and_after_agent(ws):
    pre = PLATFORM.parse(next(p for p in payloads(ws) if p["hook_event_name"] == "BeforeTool"), env(ws))
    assert json.loads(PLATFORM.render(pre, Response("deny", "why"))[0]) == {"decision": "deny", "reason": "why"}
    stop = PLATFORM.parse({"hook_event_name": "AfterAgent", "session_id": "s"}, env(ws))
    assert json.loads(PLATFORM.render(stop, Response("block", "fix a.txt:1"))[0]) == {
        "decision": "deny", "reason": "fix a.txt:1"}
    assert PLATFORM.render(pre, Response()) == ("", 0)


@pytest.mark.parametrize("tool, tool_input, kind, target", [
    ("run_shell_command", {"command": "ls"}, "shell", "ls"),
    ("write_file", {"file_path": "a", "content": "x"}, "write", "a"),
    ("replace", {"file_path": "a", "old_string": "x", "new_string": "y"}, "edit", "a"),
    ("read_file", {"file_path": "r"}, "read", "r"),
    ("grep_search", {"pattern": "p", "dir_path": "g"}, "read", "g"),
    ("invoke_agent", {"prompt": "x"}, None, None),
])
def test_tools_map_onto_the_closed_kinds(tool, tool_input, kind, target):
    got, intent = PLATFORM.intent(tool, tool_input)
    assert got == kind and (target is None or target in (intent.get("path"), intent.get("command")))


def test_doctor_says_when_the_workspace_is_not_a_trusted_folder(ws):
    PLATFORM.install(ws, "project", "vacant-hook gemini")

    def names() -> list[str]:
        return [d.name for d in PLATFORM.doctor(ws, "vacant-hook gemini")]

    assert "trusted folder" in names()
    trust = Path.home() / ".gemini" / "trustedFolders.json"
    trust.parent.mkdir(parents=True, exist_ok=True)
    trust.write_text(json.dumps({str(ws.parent): "TRUST_PARENT"}))
    assert "trusted folder" not in names()
    trust.write_text(json.dumps({str(ws / "elsewhere"): "TRUST_FOLDER"}))
    assert "trusted folder" in names()
    trust.write_text(json.dumps({str(ws / "inner"): "TRUST_PARENT"}))  # trusts ws itself
    assert "trusted folder" not in names()
    trust.write_text(json.dumps({str(ws): "DO_NOT_TRUST"}))
    assert "trusted folder" in names()


def test_doctor_fails_when_hooks_are_switched_off(ws):
    path = PLATFORM.install(ws, "project", "vacant-hook gemini")
    settings = json.loads(path.read_text())
    path.write_text(json.dumps({**settings, "hooksConfig": {"enabled": False}}))
    assert any(d.status == "fail" and "enabled" in d.name for d in PLATFORM.doctor(ws, "vacant-hook gemini"))


@pytest.fixture
def private_dir(monkeypatch):
    """A VACANT_HOME no other user may write into, nor any of its parents (a temporary directory
    is writable by others): the user's real cache directory, wherever the checkout is (a clone under /tmp too)."""
    import os
    import shutil
    import uuid

    import pwd

    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the tests' HOME is a temporary directory
    base = real_home / ".cache" / "vacant-unit" / f"gemini-{uuid.uuid4().hex[:8]}"
    base.mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("VACANT_HOME", str(base / "data"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_the_driver_refuses_a_settings_file_gemini_would_skip(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # writable by others: Gemini CLI skips a system settings file below it
    monkeypatch.setenv("VACANT_HOME", str(shared / "data"))
    (shared / "tmp").mkdir()
    driver = gemini.GeminiDriver(["gemini", "-p", "x"], tmp_path, {}, shared / "tmp")
    with pytest.raises(gemini.DoError, match="writable by others"):
        driver.prepare()
    assert gemini.SYSTEM_SETTINGS_ENV not in driver.env


def test_the_driver_merges_system_settings_and_resumes_with_the_feedback(private_dir):
    tmp_path = private_dir / "work"  # every directory the driver is given is private too
    tmp_path.mkdir()
    system = tmp_path / "system.json"
    system.write_text(json.dumps({"theirs": 1, "hooks": {"AfterAgent": [{"hooks": [{"type": "command",
                                                                                    "command": "x"}]}]}}))
    environ = {gemini.SYSTEM_SETTINGS_ENV: str(system)}
    driver = gemini.GeminiDriver(["gemini", "--yolo", "-m", "m1", "-p", "do the task"], tmp_path, environ, tmp_path)
    driver.prepare()
    assert driver.first() == ["gemini", "--yolo", "-m", "m1", "-p", "do the task"]
    merged = json.loads(Path(environ[gemini.SYSTEM_SETTINGS_ENV]).read_text())
    assert merged["theirs"] == 1 and len(merged["hooks"]["AfterAgent"]) == 2 and "BeforeTool" in merged["hooks"]
    assert "x" == json.loads(system.read_text())["hooks"]["AfterAgent"][0]["hooks"][0]["command"]
    assert driver.resume("sess-1", "fix a.txt:1") == ["gemini", "--yolo", "-m", "m1", "--resume", "sess-1",
                                                       "-p", "fix a.txt:1"]
    assert Path(environ[gemini.SYSTEM_SETTINGS_ENV]).is_relative_to(private_dir)
    driver.close()
    assert not Path(environ[gemini.SYSTEM_SETTINGS_ENV]).exists()


@given(calls=st.lists(st.tuples(st.sampled_from(["run_shell_command", "read_file"]), st.sampled_from(["a", "b"])),
                      max_size=6))
def test_a_call_made_again_after_its_batch_was_recorded_is_a_step_of_its_own(calls, tmp_path_factory):
    """The oracle: the calls before this one with the same name and input, counted directly."""
    chat = tmp_path_factory.mktemp("chat") / "session.jsonl"
    lines = []
    for n, (tool, arg) in enumerate(calls):
        record = {"id": f"m{n}", "type": "gemini", "toolCalls": [{"id": f"{tool}_{n}", "name": tool,
                                                                 "args": {"command": arg}}]}
        lines += [json.dumps({**record, "toolCalls": []}), json.dumps(record), json.dumps(record)]  # rewritten
    chat.write_text("\n".join(lines) + "\n")
    for tool in ("run_shell_command", "read_file"):
        payload = {"hook_event_name": "BeforeTool", "session_id": "s", "transcript_path": str(chat),
                   "tool_name": tool, "tool_input": {"command": "a"}}
        before = PLATFORM.parse(payload, {})
        assert before.model is None  # the chat file holds no model message
        after = PLATFORM.parse({**payload, "hook_event_name": "AfterTool"}, {})
        seen = sum(1 for c in calls if c == (tool, "a"))
        assert before.key == after.key and before.key.endswith(f".{seen}") == (seen > 0)
        assert before.key.startswith(gemini.step_key(tool, {"command": "a"}))


def test_a_tool_step_takes_the_model_from_the_chat_files_last_model_message(tmp_path):
    chat = tmp_path / "session.jsonl"
    chat.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in [
        {"id": "u", "type": "user", "content": [{"text": 'say "model":"evil"'}]},
        {"id": "m1", "type": "gemini", "content": "", "model": "gemini-2.5-pro"},
        {"id": "m2", "type": "gemini", "content": "x", "tokens": {"input": 1}, "model": "gemini-2.5-flash"},
        {"id": "u2", "type": "user", "content": [{"text": '"model":"evil"'}]}]) + "\n")
    call = PLATFORM.parse({"hook_event_name": "BeforeTool", "session_id": "s", "transcript_path": str(chat),
                           "tool_name": "read_file", "tool_input": {"file_path": "a"}}, {})
    assert call.model == "gemini-2.5-flash"
