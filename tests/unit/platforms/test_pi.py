"""pi's payloads (vacant's extension builds them from pi's events: fixtures/payloads/pi/) as the core
reads them: a bash step's exit code from the only place pi puts it (the end of its text), paths as
pi resolves them against the session's cwd, edits as pi folds them, and `vacant do`'s resume."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.platforms.pi.platform import PLATFORM, PiDriver


def post(tool: str, tool_input: dict, content: str, is_error: bool, cwd: str = "/w") -> object:
    return PLATFORM.parse({"event": "tool_result", "cwd": cwd, "sessionId": "s", "toolName": tool,
                           "toolCallId": "c1", "input": tool_input, "content": content, "isError": is_error}, {})


@settings(max_examples=30)
@given(st.text(max_size=200), st.integers(min_value=1, max_value=255))
def test_a_failing_bash_step_has_the_exit_code_pi_writes_last(output, code):
    call = post("bash", {"command": "make"}, f"{output}\n\nCommand exited with code {code}", True)
    assert (call.outcome, call.exit_code) == ("failed", code)


def test_bash_without_a_code_is_ok_or_failed_as_pi_says():
    assert post("bash", {"command": "echo"}, "Command exited with code 3", False).exit_code == 0  # its output
    assert (post("bash", {"command": "true"}, "", False).exit_code, post("bash", {"command": "x"}, "killed", True).exit_code) == (0, None)
    assert post("bash", {"command": "x"}, "killed", True).outcome == "failed"


@given(st.sampled_from(["a.py", "@a.py", "./a.py", "sub/../a.py"]))
def test_a_write_is_scoped_to_the_path_pi_resolves(path):
    call = PLATFORM.parse({"event": "tool_call", "cwd": "/w", "sessionId": "s", "toolName": "write",
                           "toolCallId": "c", "input": {"path": path, "content": "x"}}, {})
    assert call.scope == ["/w/a.py"] and call.intent["path"] == "/w/a.py" and call.tool_kind == "write"


def test_a_home_path_is_expanded_and_bash_may_touch_anything():
    call = PLATFORM.parse({"event": "tool_call", "cwd": "/w", "sessionId": "s", "toolName": "edit", "toolCallId": "c",
                           "input": {"path": "~/x", "oldText": "a", "newText": "b"}}, {})
    assert call.scope == [os.path.expanduser("~/x")]
    assert call.intent["edits"] == [{"old_string": "a", "new_string": "b", "replace_all": False}]
    shell = PLATFORM.parse({"event": "tool_call", "cwd": "/w", "sessionId": "s", "toolName": "bash",
                            "toolCallId": "c", "input": {"command": "ls"}}, {})
    assert shell.scope is None and shell.tool_kind == "shell"


def test_the_stop_after_a_block_says_so_and_carries_the_last_text():
    call = PLATFORM.parse({"event": "agent_end", "cwd": "/w", "sessionId": "s", "finalText": "Done.",
                           "stopActive": True}, {})
    assert (call.kind, call.stop_hook_active, call.final_text) == ("stop", True, "Done.")


def test_vacant_do_resumes_the_session_with_the_feedback(tmp_path):
    driver = PiDriver(["pi", "-p", "--model", "m", "-c", "fix it"], tmp_path, {}, tmp_path)
    assert driver.resume("abc", "FEEDBACK") == ["pi", "-p", "--model", "m", "--session", "abc", "FEEDBACK"]
