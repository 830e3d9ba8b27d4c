"""Qwen Code: the payloads captured from the real binary (fixtures/payloads/qwen/) replayed through
the recorder, every tool step paired Pre/Post with its reads and outcome; its tools on the core's
closed kinds; the driver's command lines and its system settings file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vacant.core.calls import Response
from vacant.core.locations import state_dir
from vacant.platforms import qwen
from vacant.record.recorder import Recorder
from vacant.store.run import RunView

CAPTURED = json.loads((Path(__file__).resolve().parents[3] / "fixtures" / "payloads" / "qwen" /
                       "hook_payloads.json").read_text())
PLATFORM = qwen.PLATFORM

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {"a.txt": "hello\n"}


def payloads(ws: Path) -> list[dict]:
    text = json.dumps(CAPTURED["payloads"]).replace("<ws>", str(ws)).replace("<home>", str(ws.parent / "home"))
    return json.loads(text)


def first_session(ws: Path) -> list[dict]:
    items = payloads(ws)
    return [p for p in items if p["session_id"] == items[0]["session_id"]]


def env(ws: Path) -> dict[str, str]:
    return {"QWEN_PROJECT_DIR": str(ws), "CLAUDE_PROJECT_DIR": str(ws), "QWEN_CODE_MODEL": "fake-model"}


# what each tool did to the workspace, applied just before its Post (as it happened in the run)
EFFECTS = {"write_file": lambda ws: (ws / "hello.py").write_text("print('hello')\n"),
           "edit": lambda ws: (ws / "hello.py").write_text("print('world')\n")}


def replay(ws: Path, items: list[dict]) -> RunView:
    session = items[0]["session_id"]
    for payload in items:
        if payload["hook_event_name"] == "PostToolUse" and payload["tool_name"] in EFFECTS:
            EFFECTS[payload["tool_name"]](ws)
        Recorder(ws, session, PLATFORM).handle(PLATFORM.parse(payload, env(ws)))
    Recorder(ws, session, PLATFORM).handle(PLATFORM.parse(
        {"hook_event_name": "SessionEnd", "session_id": session, "reason": "process exited"}, env(ws)))
    return RunView.load(state_dir(ws) / "runs" / session)


def test_the_captured_session_records_every_tool_step_paired_with_its_reads(ws):
    view = replay(ws, first_session(ws))
    steps = view.ordered()
    assert [(s.tool, s.outcome) for s in steps] == [
        ("write_file", "ok"), ("read_file", "ok"), ("edit", "ok"), ("run_shell_command", "ok"),
        ("run_shell_command", "failed"), ("grep_search", "ok"), ("glob", "ok"), ("read_file", "failed")]
    assert steps[0].changed_paths() == ["hello.py"] and steps[2].changed_paths() == ["hello.py"]
    assert all(not s.changed_paths() for s in steps[1:2] + steps[3:])
    assert steps[4].exit_code == 3 and steps[3].exit_code == 0
    origins = [[r.get("origin") for r in s.reads] for s in steps]
    assert origins[1] == ["file"] and origins[3] == ["command"] and origins[5] == ["search"]
    assert steps[0].actor["platform"] == "qwen-code" and steps[0].actor["model"] == "fake-model"
    prompts = [r for r in view.of_type("read") if r.get("origin") == "prompt"]
    assert len(prompts) == 1, "the empty prompts Qwen sends after each tool are not the person's"
    assert [r["type"] for r in view.records][-1] == "run_end"


def test_a_denied_call_has_no_post_and_is_closed_by_the_batch(ws):
    items = [p for p in payloads(ws) if p["session_id"] != payloads(ws)[0]["session_id"]]
    pre = next(p for p in items if p["hook_event_name"] == "PreToolUse")
    batch = next(p for p in items if p["hook_event_name"] == "PostToolBatch")
    call, closing = PLATFORM.parse(pre, env(ws)), PLATFORM.parse(batch, env(ws))
    assert call.kind == "tool_pre" and call.tool_kind == "shell" and call.intent == {"command": "git push origin main"}
    assert [b.key for b in closing.batch] == [call.key]  # the batch names the call by the same key
    assert "DENIED-BY-VACANT" in closing.batch[0].response_text


def test_the_stop_feedback_came_back_as_the_next_prompt(ws):
    items = payloads(ws)
    stops = [p for p in items if p["hook_event_name"] == "Stop"]
    assert [s["stop_hook_active"] for s in stops[-2:]] == [False, True]
    prompt = PLATFORM.parse(items[items.index(stops[-1]) - 1], env(ws))
    assert prompt.kind == "prompt" and prompt.reads[0].content == "FIX-THIS-NOW at a.txt:1"


def test_render_is_claudes_contract(ws):
    pre = PLATFORM.parse(first_session(ws)[3], env(ws))
    out = json.loads(PLATFORM.render(pre, Response("deny", "why"))[0])
    assert out["hookSpecificOutput"] == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                         "permissionDecisionReason": "why"}
    stop = PLATFORM.parse({"hook_event_name": "Stop", "session_id": "s"}, env(ws))
    assert json.loads(PLATFORM.render(stop, Response("block", "fix a.txt:1"))[0]) == {
        "decision": "block", "reason": "fix a.txt:1"}


@pytest.mark.parametrize("tool, tool_input, kind, target", [
    ("run_shell_command", {"command": "ls"}, "shell", "ls"),
    ("write_file", {"file_path": "a", "content": "x"}, "write", "a"),
    ("edit", {"file_path": "a", "old_string": "x", "new_string": "y"}, "edit", "a"),
    ("read_file", {"file_path": "r"}, "read", "r"),
    ("grep_search", {"pattern": "p", "path": "g"}, "read", "g"),
    ("agent", {"prompt": "x"}, None, None),
])
def test_tools_map_onto_the_closed_kinds(tool, tool_input, kind, target):
    got, intent = PLATFORM.intent(tool, tool_input)
    assert got == kind and (target is None or target in (intent.get("path"), intent.get("command")))


def test_the_driver_pins_the_session_and_resumes_it_with_the_feedback(tmp_path, monkeypatch):
    system = tmp_path / "system.json"
    system.write_text(json.dumps({"theirs": 1, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}))
    environ = {qwen.SYSTEM_SETTINGS_ENV: str(system)}
    driver = qwen.QwenDriver(["qwen", "--approval-mode", "yolo", "-m", "m1", "do the task"], tmp_path, environ, tmp_path)
    driver.prepare()
    first = driver.first()
    assert first[:5] == ["qwen", "--approval-mode", "yolo", "-m", "m1"] and first[-2:] == ["--session-id", driver.session]
    merged = json.loads(Path(environ[qwen.SYSTEM_SETTINGS_ENV]).read_text())
    assert merged["theirs"] == 1 and len(merged["hooks"]["Stop"]) == 2 and "PreToolUse" in merged["hooks"]
    assert json.loads(system.read_text())["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "x"}]}]
    again = driver.resume(driver.session, "fix a.txt:1")
    assert again == ["qwen", "--approval-mode", "yolo", "-m", "m1", "--resume", driver.session, "fix a.txt:1"]
