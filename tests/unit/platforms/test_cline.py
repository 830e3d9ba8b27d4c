"""Cline's payloads (fixtures/payloads/cline/, captured from the binary) as the core reads them: a
command's exit code from its item's error, the editor as a write or an edit of its path, every
file read_files read, and the session Cline resumes by (sessionContext.rootSessionId)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.platforms.cline.platform import PLATFORM


def post(name: str, tool_input: dict, output: object, error: str | None = None) -> object:
    return PLATFORM.parse({"hookName": "tool_result", "taskId": "conv_1", "workspaceRoots": ["/w"],
                           "sessionContext": {"rootSessionId": "r1"},
                           "tool_result": {"id": "c1", "name": name, "input": tool_input, "output": output,
                                           "error": error}}, {})


@settings(max_examples=30)
@given(st.integers(min_value=1, max_value=255), st.text(max_size=50))
def test_a_failing_command_has_its_exit_code(code, text):
    item = {"query": "make", "result": f"[Command exited with code {code}]\n{text}",
            "error": f"Command exited with code {code}", "success": False}
    call = post("run_commands", {"commands": ["make"]}, [item])
    assert (call.outcome, call.exit_code, call.session_id) == ("failed", code, "r1")
    assert [(r.origin, r.ref) for r in call.reads] == [("command", "make")]


def test_a_passing_command_is_exit_0_and_its_output_a_read():
    call = post("run_commands", {"commands": ["ls"]}, [{"query": "ls", "result": "a\n", "success": True}])
    assert (call.outcome, call.exit_code, call.reads[0].content) == ("ok", 0, "a\n")


def test_the_editor_writes_or_edits_its_path_and_read_files_reads_each_file(tmp_path):
    write = PLATFORM.parse({"hookName": "tool_call", "workspaceRoots": ["/w"], "tool_call": {
        "id": "c", "name": "editor", "input": {"path": "/w/a.py", "new_text": "x"}}}, {})
    edit = PLATFORM.parse({"hookName": "tool_call", "workspaceRoots": ["/w"], "tool_call": {
        "id": "c", "name": "editor", "input": {"path": "/w/a.py", "old_text": "x", "new_text": "y"}}}, {})
    assert (write.tool_kind, write.scope, write.intent["content"]) == ("write", ["/w/a.py"], "x")
    assert (edit.tool_kind, edit.intent["edits"][0]["old_string"]) == ("edit", "x")
    (tmp_path / "f.md").write_text("hi")
    read = post("read_files", {"files": [{"path": str(tmp_path / "f.md")}]}, [{"result": "1 | hi", "success": True}])
    assert [(r.origin, r.ref, r.content) for r in read.reads] == [("file", str(tmp_path / "f.md"), b"hi")]
