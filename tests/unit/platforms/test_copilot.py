"""GitHub Copilot CLI: the Claude-shaped payloads captured from the real binary
(fixtures/payloads/copilot/) replayed through the recorder with the session's events.jsonl written
the way Copilot writes it (a call's start before its Pre, its completion after its Post), every
tool step paired by the call itself (no tool id on the wire) with its reads and outcome; Claude's
answers; its tools on the core's closed kinds; the flat hooks file merged and taken out; the
driver's hooks file for one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.calls import Response
from vacant.core.locations import state_dir
from vacant.platforms import copilot
from vacant.platforms.driver import DoError
from vacant.record.recorder import Recorder
from vacant.store.run import RunView

CAPTURED = json.loads((Path(__file__).resolve().parents[3] / "fixtures" / "payloads" / "copilot" /
                       "claude_shaped_payloads.json").read_text())
PLATFORM = copilot.PLATFORM
ORIGINAL = {claude: own for own, claude in copilot.TOOLS.items()}  # Copilot's own names, as events.jsonl has them

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {"a.txt": "hello\n", ".github/hooks/probe.json": "{}\n"}


def payloads(ws: Path) -> list[dict]:
    text = json.dumps(CAPTURED["payloads"]).replace("<ws>", str(ws)).replace("<home>", str(ws.parent / "home"))
    return json.loads(text)


def env(ws: Path) -> dict[str, str]:
    return {"CLAUDE_PROJECT_DIR": str(ws), "COPILOT_PROJECT_DIR": str(ws), "HOME": str(ws.parent / "home")}


def stringify(record: dict) -> str:
    """As Copilot's JSON.stringify writes a record: compact, non-ASCII as it is."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


class EventsFile:
    """The session's events.jsonl as Copilot writes it around the hooks (measured order)."""

    def __init__(self, ws: Path, session: str) -> None:
        self.path = Path(copilot.events_path(session, env(ws)))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.open: list[tuple[str, str, object]] = []
        self.n = 0

    def write(self, record: dict) -> None:
        with self.path.open("a") as handle:
            handle.write(stringify(record) + "\n")

    def before_pre(self, payload: dict) -> None:
        self.n += 1
        call = f"call_{self.n}"
        self.open.append((call, payload["tool_name"], payload["tool_input"]))
        self.write({"type": "tool.execution_start", "data": {"toolCallId": call, "model": "m-1", "arguments":
                    payload["tool_input"], "toolName": ORIGINAL.get(payload["tool_name"], payload["tool_name"])}})

    def after_post(self, payload: dict) -> None:
        found = next(c for c in self.open if c[1:] == (payload["tool_name"], payload["tool_input"]))
        self.open.remove(found)
        self.write({"type": "tool.execution_complete", "data": {"toolCallId": found[0], "success": True}})


EFFECTS = {"Write": lambda ws: (ws / "a.txt").write_text("x\n"), "Edit": lambda ws: (ws / "a.txt").write_text("y\n")}


def replay(ws: Path, items: list[dict]) -> RunView:
    session = items[0]["session_id"]
    events = EventsFile(ws, session)
    for payload in items:
        event = payload["hook_event_name"]
        if event == "PreToolUse":
            events.before_pre(payload)
        if event == "PostToolUse" and payload["tool_name"] in EFFECTS:
            EFFECTS[payload["tool_name"]](ws)
        Recorder(ws, session, PLATFORM).handle(PLATFORM.parse(payload, env(ws)))
        if event == "PostToolUse":
            events.after_post(payload)
    return RunView.load(state_dir(ws) / "runs" / session)


def test_the_captured_session_records_every_tool_step_paired_with_its_reads(ws):
    items = [p for p in payloads(ws) if "DENYME" not in json.dumps(p)]  # the call the probe's hook denied
    pres = [p for p in items if p["hook_event_name"] == "PreToolUse"]
    view = replay(ws, items)
    steps = view.ordered()
    # the oracle: the captured run's own Pre events, in order; the same view made twice is two steps
    assert [s.tool for s in steps] == [p["tool_name"] for p in pres]
    assert [s.tool for s in steps].count("Read") == 2
    assert all(s.outcome != "not-run" for s in steps), "every Pre met its Post"
    by_tool = {s.tool: s for s in steps}
    assert by_tool["Write"].changed_paths() == ["a.txt"] and by_tool["Edit"].changed_paths() == ["a.txt"]
    assert (by_tool["Bash"].outcome, by_tool["Bash"].exit_code) == ("failed", 3)
    assert [r.get("origin") for r in by_tool["Read"].reads] == ["file"]
    assert [r.get("origin") for r in by_tool["Grep"].reads] == ["search"]
    assert {s.actor["platform"] for s in steps} == {"copilot-cli"} and {s.actor["model"] for s in steps} == {"m-1"}
    assert [r["type"] for r in view.records][-1] == "run_end"


def test_without_the_events_file_a_pre_and_its_post_still_agree(ws):
    items = payloads(ws)
    pres = [p for p in items if p["hook_event_name"] == "PreToolUse"]
    for post in [p for p in items if p["hook_event_name"] == "PostToolUse"]:
        # the oracle: the Pre naming the same tool and input (a parallel batch interleaves them)
        (pre,) = {json.dumps(p["tool_input"], sort_keys=True): p for p in pres
                  if (p["tool_name"], p["tool_input"]) == (post["tool_name"], post["tool_input"])}.values()
        assert PLATFORM.parse(pre, {}).key == PLATFORM.parse(post, {}).key
    assert len({PLATFORM.parse(p, {}).key for p in pres}) == len({json.dumps([p["tool_name"], p["tool_input"]])
                                                                   for p in pres})


json_values = st.recursive(st.none() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)


@settings(max_examples=50, deadline=None)
@given(tool=st.sampled_from(["Bash", "Write", "Read", "mcp_x"]), done=st.integers(0, 3),
       first=st.dictionaries(st.text(max_size=6), json_values, max_size=4))
def test_the_key_counts_the_identical_calls_completed_before(tool, done, first, tmp_path_factory):
    raw = b""
    for n in range(done + 1):  # `done` identical calls completed, then this one started
        start = {"type": "tool.execution_start", "data": {"toolCallId": f"c{n}", "toolName": ORIGINAL.get(tool, tool),
                                                           "arguments": first, "model": f"m{n}"}}
        raw += stringify(start).encode() + b"\n"
        if n < done:
            raw += stringify({"type": "tool.execution_complete", "data": {"toolCallId": f"c{n}"}}).encode() + b"\n"
    assert copilot.calls_like(raw, tool, json.loads(json.dumps(first))) == (done, f"m{done}")
    # a call whose own start is not written yet (Copilot queues the writes): the last model named
    assert copilot.calls_like(raw, tool + "-other", first) == (0, f"m{done}")
    assert copilot.calls_like(b"", tool, first) == (0, None)


def test_deny_and_stop_are_claudes_answers(ws):
    pre = PLATFORM.parse(next(p for p in payloads(ws) if p["hook_event_name"] == "PreToolUse"), env(ws))
    out = json.loads(PLATFORM.render(pre, Response("deny", "why"))[0])
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "why"
    stop = PLATFORM.parse({"hook_event_name": "Stop", "session_id": "s"}, env(ws))
    assert json.loads(PLATFORM.render(stop, Response("block", "fix a.txt:1"))[0]) == {
        "decision": "block", "reason": "fix a.txt:1"}
    assert PLATFORM.render(pre, Response()) == ("", 0)


@pytest.mark.parametrize("tool, tool_input, kind, target", [
    ("Bash", {"command": "ls"}, "shell", "ls"),
    ("bash", {"command": "ls"}, "shell", "ls"),
    ("Write", {"path": "a", "file_text": "x"}, "write", "a"),
    ("Edit", {"path": "a", "old_str": "x", "new_str": "y"}, "edit", "a"),
    ("Read", {"path": "r"}, "read", "r"),
    ("task", {"prompt": "x"}, None, None),
])
def test_tools_map_onto_the_closed_kinds(tool, tool_input, kind, target):
    got, intent = PLATFORM.intent(tool, tool_input)
    assert got == kind and (target is None or target in (intent.get("path"), intent.get("command")))


def test_install_writes_claudes_event_names_in_copilots_flat_shape_beside_the_persons_hooks(ws):
    path = ws / ".github" / "hooks" / "vacant.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    theirs = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./guard.sh"}]}}
    path.write_text(json.dumps(theirs))
    before = path.read_bytes()
    PLATFORM.install(ws, "project", "vacant-hook copilot")
    hooks = json.loads(path.read_text())["hooks"]
    assert set(hooks) == {"preToolUse", *copilot.EVENT_KINDS}
    assert hooks["PreToolUse"] == [{"type": "command", "bash": "vacant-hook copilot", "timeoutSec": 60}]
    assert hooks["preToolUse"] == theirs["hooks"]["preToolUse"]
    assert [d.status for d in PLATFORM.doctor(ws, "vacant-hook copilot") if d.name == "hooks installed"] == ["ok"]
    PLATFORM.uninstall(ws, "project")
    assert path.read_bytes() == before


def test_a_fresh_install_has_version_1_and_uninstalls_to_nothing(ws):
    path = PLATFORM.install(ws, "project", "vacant-hook copilot")
    assert json.loads(path.read_text())["version"] == 1
    PLATFORM.uninstall(ws, "project")
    assert not path.exists()


def test_the_driver_brings_a_hooks_file_for_the_run_and_takes_it_out(ws, tmp_path):
    (ws / ".github" / "hooks" / "probe.json").unlink()
    (ws / ".github" / "hooks").rmdir()
    run_env: dict[str, str] = {}
    driver = copilot.CopilotDriver(["copilot", "--allow-all-tools", "--trust-folder", "-p", "task"], ws, run_env,
                                   tmp_path)
    driver.prepare()
    hooks = json.loads((ws / ".github" / "hooks" / "vacant.json").read_text())["hooks"]
    assert "vacant-hook" in hooks["PreToolUse"][0]["bash"] and run_env[copilot.PROMPT_MODE_HOOKS_ENV] == "true"
    assert driver.resume("s-1", "FIX") == ["copilot", "--allow-all-tools", "--resume=s-1", "-p", "FIX"]
    driver.close()
    assert (ws / ".github").exists() and not (ws / ".github" / "hooks").exists()


def test_the_driver_never_replaces_a_hooks_file_of_that_name(ws, tmp_path):
    mine = ws / ".github" / "hooks" / "vacant.json"
    mine.write_text('{"version": 1, "hooks": {}}')
    with pytest.raises(DoError):
        copilot.CopilotDriver(["copilot", "-p", "x"], ws, {}, tmp_path).prepare()
    assert mine.read_text() == '{"version": 1, "hooks": {}}'


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_doctor_says_when_the_repositorys_settings_turn_every_hook_off(ws, name):
    PLATFORM.install(ws, "project", "vacant-hook copilot")
    settings = ws / ".github" / "copilot" / name
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"disableAllHooks": false}')
    assert all(d.status != "fail" for d in PLATFORM.doctor(ws, "vacant-hook copilot") if "disableAllHooks" in d.name)
    settings.write_text('{"disableAllHooks": true}')
    failed = [d.name for d in PLATFORM.doctor(ws, "vacant-hook copilot") if d.status == "fail"]
    assert [name for name in failed if name != "hook command"] == [f"{settings} disableAllHooks"]


def test_the_gate_guards_the_settings_that_can_turn_the_hooks_off(ws, isolated_home):
    from vacant.platforms import all_platforms  # noqa: F401 - registers every platform's guarded files
    from vacant.policy.gate import recordguard

    made = [ws / ".github" / "copilot" / "settings.json", ws / ".github" / "copilot" / "settings.local.json",
            isolated_home / ".copilot" / "settings.json"]
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    guarded = recordguard.guarded(str(ws), str(state_dir(ws)), str(isolated_home))
    assert {str(p.resolve()) for p in made} <= set(guarded)


@settings(max_examples=8, deadline=None)
@given(late_ms=st.integers(0, 200), first_call=st.booleans())
def test_a_pre_waits_for_its_calls_queued_start_line_and_takes_its_model(late_ms, first_call, tmp_path_factory):
    """Copilot queues its events-file writes: the call's start (and, for a session's first call,
    every line naming a model) may land a little after the Pre began."""
    import threading
    import time

    ws = tmp_path_factory.mktemp("ws")
    events = EventsFile(ws, "s-late")
    if not first_call:
        events.write({"type": "session.start", "data": {"selectedModel": "m-old"}})
    pre = next(p for p in payloads(ws) if p["hook_event_name"] == "PreToolUse")
    pre = dict(pre, session_id="s-late")
    writer = threading.Timer(late_ms / 1000, events.before_pre, [pre])
    writer.start()
    try:
        started = time.monotonic()
        call = PLATFORM.parse(pre, env(ws))
        took = time.monotonic() - started
    finally:
        writer.join()
    assert call.model == "m-1"  # the call's own model, not the older one nor none
    assert took < late_ms / 1000 + 0.3


def test_a_pre_with_no_session_directory_does_not_wait(ws):
    import time

    pre = dict(next(p for p in payloads(ws) if p["hook_event_name"] == "PreToolUse"), session_id="s-none")
    started = time.monotonic()
    assert PLATFORM.parse(pre, env(ws)).model is None
    assert time.monotonic() - started < 0.2
