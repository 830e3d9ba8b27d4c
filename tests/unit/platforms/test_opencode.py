"""OpenCode platform module: the plugin's payloads (shapes captured from opencode-ai 1.18.33 by a
logging plugin), rendering for the plugin, and the plugin's install/uninstall; the plugin itself
under node: a tool call whose hook gives no answer does not run, any other hook's failure changes
nothing."""

from __future__ import annotations

import json
from pathlib import Path

import opencode_plugin
import pytest

from vacant.core.locations import state_dir

from vacant.core.calls import Response
from vacant.platforms import deny, opencode
from vacant.platforms.all_platforms import load
from vacant.platforms.settings_file import InstallError, hook_command
from vacant.record.recorder import Recorder

CMD = hook_command("opencode")  # a command that can start here: doctor checks it
SESSION = "ses_dd5bfbde6ffetCXD294tXQ7ukg"


pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {".vacant": None, "a.txt": "hello\n"}


def before(ws: Path, tool: str, args: dict, call: str = "call_chat_2_0", **extra) -> dict:
    return {"event": "tool.execute.before", "directory": str(ws), "sessionID": SESSION, "agentID": None,
            "agent": "build", "model": "fake/fake-model", "tool": tool, "callID": call, "args": args, **extra}


def after(ws: Path, tool: str, args: dict, output, metadata: dict, call: str = "call_chat_2_0") -> dict:
    return {**before(ws, tool, args, call), "event": "tool.execute.after", "title": "t", "output": output,
            "metadata": metadata}


def test_loaded_by_name_and_template_has_the_placeholder():
    assert load("opencode") is opencode.PLATFORM
    text = opencode.TEMPLATE.read_text()
    assert opencode.PLACEHOLDER in text and text.startswith(opencode.PLUGIN_MARK)
    assert opencode.CANNOT_START_PLACEHOLDER in text
    rendered = opencode.render_plugin(CMD)
    assert json.dumps(CMD) in rendered and opencode.PLACEHOLDER not in rendered
    assert json.dumps(deny.CANNOT_START) in rendered and opencode.CANNOT_START_PLACEHOLDER not in rendered


def test_write_scopes_to_its_file_and_keeps_the_model(ws):
    call = opencode.PLATFORM.parse(before(ws, "write", {"filePath": str(ws / "b.txt"), "content": "x\n"}), {})
    assert (call.kind, call.tool, call.key, call.scope) == ("tool_pre", "write", "call_chat_2_0", [str(ws / "b.txt")])
    assert call.workspace == ws and call.session_id == SESSION and call.model == "fake/fake-model"
    assert call.agent_id is None and call.agent_type is None  # the main agent ("build") is `main`


def test_relative_edit_path_is_resolved_against_the_project(ws):
    call = opencode.PLATFORM.parse(before(ws, "edit", {"filePath": "a.txt", "oldString": "h", "newString": "j"}), {})
    assert call.scope == [str(ws / "a.txt")]


def test_bash_exit_code_comes_from_metadata(ws):
    args = {"command": "cat a.txt; exit 3", "description": "show a"}
    call = opencode.PLATFORM.parse(after(ws, "bash", args, "hello\n", {"output": "hello\n", "exit": 3}), {})
    assert (call.kind, call.scope, call.outcome, call.exit_code) == ("tool_post", None, "failed", 3)
    assert [(r.origin, r.ref, r.content) for r in call.reads] == [("command", "cat a.txt; exit 3", "hello\n")]
    ok = opencode.PLATFORM.parse(after(ws, "bash", args, "", {"exit": 0}), {})
    assert (ok.outcome, ok.exit_code) == ("ok", 0)


def test_read_records_the_file_bytes_not_the_numbered_view(ws):
    shown = f"<path>{ws / 'a.txt'}</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file)\n</content>"
    call = opencode.PLATFORM.parse(after(ws, "read", {"filePath": str(ws / "a.txt")}, shown, {"preview": "hello"}), {})
    assert call.scope == [] and [(r.origin, r.ref, r.content) for r in call.reads] == [("file", str(ws / "a.txt"), b"hello\n")]


def test_prompt_idle_subagent_and_unknown(ws):
    prompt = opencode.PLATFORM.parse({"event": "chat.message", "directory": str(ws), "sessionID": SESSION,
                                      "prompt": "do the task"}, {})
    assert prompt.kind == "prompt" and prompt.reads[0].content == "do the task"
    idle = opencode.PLATFORM.parse({"event": "session.idle", "directory": str(ws), "sessionID": SESSION}, {})
    assert idle.kind == "stop" and idle.agent_id is None
    sub = opencode.PLATFORM.parse({**before(ws, "write", {"filePath": "s.txt", "content": "s"}),
                                   "agentID": "ses_child", "agent": "general"}, {})
    assert (sub.session_id, sub.agent_id, sub.agent_type) == (SESSION, "ses_child", "general")
    assert opencode.PLATFORM.parse({"event": "file.edited"}, {}).kind == "ignore"
    assert opencode.PLATFORM.parse(before(ws, "task", {"subagent_type": "general"}), {}).scope == []
    assert opencode.PLATFORM.parse(before(ws, "some_mcp_tool", {}), {}).scope is None


def test_render_for_the_plugin(ws):
    pre = opencode.PLATFORM.parse(before(ws, "bash", {"command": "git push"}), {})
    assert json.loads(opencode.PLATFORM.render(pre, Response("deny", "ask the person"))[0]) == {
        "action": "deny", "reason": "ask the person"}
    assert opencode.PLATFORM.render(pre, Response()) == ("", 0)
    idle = opencode.PLATFORM.parse({"event": "session.idle", "directory": str(ws), "sessionID": SESSION}, {})
    assert opencode.PLATFORM.render(idle, Response("block", "fix x")) == ("", 0)  # nothing can carry it
    assert opencode.PLATFORM.stop_rounds == 0


def test_recorded_through_the_recorder(ws):
    platform = opencode.PLATFORM
    calls = [
        {"event": "chat.message", "directory": str(ws), "sessionID": SESSION, "prompt": "write b"},
        before(ws, "write", {"filePath": str(ws / "b.txt"), "content": "B\n"}),
    ]
    for payload in calls:
        Recorder(ws, SESSION, platform).handle(platform.parse(payload, {}))
    (ws / "b.txt").write_text("B\n")
    Recorder(ws, SESSION, platform).handle(platform.parse(
        after(ws, "write", {"filePath": str(ws / "b.txt"), "content": "B\n"}, "Wrote file successfully.", {}), {}))
    Recorder(ws, SESSION, platform).handle(platform.parse(
        {"event": "session.end", "directory": str(ws), "sessionID": SESSION, "reason": "process exited"}, {}))
    from vacant.store.run import RunView

    view = RunView.load(state_dir(ws) / "runs" / SESSION)
    (step,) = view.ordered()
    assert (step.tool, step.outcome, step.changed_paths()) == ("write", "ok", ["b.txt"])
    assert step.actor == {"platform": "opencode", "agent_definition": "main", "model": "fake/fake-model",
                          "task_family": "general"}
    assert [r["type"] for r in view.records][-1] == "run_end"


@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_then_uninstall_leaves_nothing(ws, scope):
    path = opencode.PLATFORM.install(ws, scope, CMD)
    assert path.name == "vacant.js" and json.dumps(CMD) in path.read_text()
    expected = ws / ".opencode" / "plugins" if scope == "project" else opencode.config_dir() / "plugins"
    assert path.parent == expected.resolve() or path.parent == expected
    assert opencode.PLATFORM.install(ws, scope, CMD) == path  # again: same file, no error
    report = {name: status == "ok" for name, status, _ in opencode.PLATFORM.doctor(ws, CMD)}
    assert report["plugin installed"] is True and report[str(path)] is True
    assert opencode.PLATFORM.uninstall(ws, scope) == path
    assert not path.exists() and not path.parent.exists()
    if scope == "project":
        assert not (ws / ".opencode").exists()
    assert opencode.PLATFORM.uninstall(ws, scope) is None


def test_uninstall_keeps_directories_that_hold_something_else(ws):
    (ws / ".opencode").mkdir()
    (ws / ".opencode" / "opencode.json").write_text("{}\n")
    path = opencode.PLATFORM.install(ws, "project", CMD)
    opencode.PLATFORM.uninstall(ws, "project")
    assert not path.exists() and (ws / ".opencode" / "opencode.json").read_text() == "{}\n"


def test_a_foreign_vacant_js_is_never_replaced(ws):
    foreign = ws / ".opencode" / "plugins" / "vacant.js"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("export const Mine = async () => ({})\n")
    with pytest.raises(InstallError, match="not vacant's plugin"):
        opencode.PLATFORM.install(ws, "project", CMD)
    assert opencode.PLATFORM.uninstall(ws, "project") is None
    assert foreign.read_text() == "export const Mine = async () => ({})\n"
    report = {name: status == "ok" for name, status, _ in opencode.PLATFORM.doctor(ws, CMD)}
    assert report[str(foreign)] is False and report["plugin installed"] is False


def test_doctor_flags_a_stale_hook_command(ws):
    opencode.PLATFORM.install(ws, "project", "/old/python /old/vacant-hook opencode")
    report = {name: status == "ok" for name, status, _ in opencode.PLATFORM.doctor(ws, CMD)}
    assert report[str(ws.resolve() / ".opencode" / "plugins" / "vacant.js")] is False


def test_doctor_advises_reinstalling_a_plugin_an_older_vacant_wrote(ws):
    path = opencode.PLATFORM.install(ws, "project", CMD)
    code = f"{path} (code)"
    assert code not in {d.name for d in opencode.PLATFORM.doctor(ws, CMD)}
    older = path.read_text().replace("if (failed) throw new Error(CANNOT_START.replace(\"{error}\", failed));\n", "")
    assert older != path.read_text()
    path.write_text(older)  # the plugin before its gate failed closed
    (line,) = [d for d in opencode.PLATFORM.doctor(ws, CMD) if d.name == code]
    assert line.status == "warn" and "vacant init --platform opencode --scope project" in line.detail


# -- the plugin under node: the gate fails closed, the recorder open --------------------------------

# hook commands that give no answer: the interpreter gone (a rebuilt venv: sh's 127), a crash (exit 1),
# a kill, garbage on stdout, a command that cannot be spawned at all (no such directory to run in)
NO_ANSWER = {
    "interpreter gone": ("/nonexistent/venv/bin/python -I -S /nonexistent/vacant-hook-client.py opencode",
                         "exit code 127"),
    "crash": ("echo 'Traceback' >&2; exit 1", "exit code 1"),
    "killed": ("kill -9 $$", "killed by SIGKILL"),
    "garbage": ("echo 'not json'", "an answer that is not JSON"),
}


@pytest.mark.parametrize("case", sorted(NO_ANSWER))
def test_the_plugin_blocks_a_tool_whose_hook_gives_no_answer(case, tmp_path):
    command, why = NO_ANSWER[case]
    done = opencode_plugin.before(command, tmp_path, tmp_path / "plugin")
    assert done == {"ran": False, "message": deny.CANNOT_START.format(error=why)}


def test_the_plugin_blocks_a_tool_whose_hook_cannot_be_spawned(tmp_path):
    done = opencode_plugin.before("true", tmp_path / "gone", tmp_path / "plugin")  # spawn's cwd is missing
    assert not done["ran"] and done["message"] == deny.CANNOT_START.format(error="ENOENT")


@pytest.mark.parametrize("command, ran", [("true", True), ("echo '{}'", True), ("echo '{\"note\": \"n\"}'", True),
                                          ("echo '{\"action\": \"deny\", \"reason\": \"Held.\"}'", False)])
def test_the_plugin_runs_the_tool_when_its_hook_allows_it(command, ran, tmp_path):
    done = opencode_plugin.before(command, tmp_path, tmp_path / "plugin")
    assert done["ran"] is ran and done.get("message", "Held.") == "Held."


@pytest.mark.parametrize("hook", ["tool.execute.after", "chat.message"])
def test_the_plugin_records_open_a_hook_that_gives_no_answer(hook, tmp_path):
    done = opencode_plugin.before("exit 1", tmp_path, tmp_path / "plugin", hook=hook)
    assert done == {"ran": True}


def test_a_stop_block_reaches_the_plugin_only_where_idle_can_carry_it(tmp_path):
    """Kilo's idle carries the feedback into the same run (the plugin prompts the session with the
    reason: tests/e2e/test_kilo.py); OpenCode's was measured lost, so it renders nothing there."""
    from vacant.core.calls import HookCall

    stop = HookCall("stop", "s", tmp_path)
    reason = 'fix config.py: "RATE" is 0.09\nnot 0.08'
    assert load("opencode").render(stop, Response("block", reason)) == ("", 0)
    kilo = load("kilo")
    stdout, code = kilo.render(stop, Response("block", reason))
    assert (json.loads(stdout), code) == ({"action": "block", "reason": reason}, 0)
    assert kilo.render(stop, Response("allow", "")) == ("", 0)
    assert kilo.stop_rounds is None and load("opencode").stop_rounds == 0
