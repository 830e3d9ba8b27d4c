"""Turns for the scripted OpenAI-compatible upstream (fixtures/upstreams/fake_responses.py, Chat
Completions), a tool's result as the agent sent it back, running `vacant`, and the two-round check
of `vacant do`: shared by the Qwen Code and Copilot tests. This module holds no tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from codex_harness import BIN
from do_harness import FEEDBACK, log_of, report, rounds
from opencode_harness import chat_request_text


def tool(name: str, match: str | None = None, call_id: str | None = None, **arguments) -> dict:
    item = {"type": "function", "name": name, "arguments": arguments, **({"call_id": call_id} if call_id else {})}
    turn = {"items": [item]}
    return {**turn, "match": match} if match else turn


def text(words: str, match: str | None = None) -> dict:
    turn = {"items": [{"type": "text", "text": words}]}
    return {**turn, "match": match} if match else turn


def vacant(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "vacant"), *args], cwd=cwd, env=env, capture_output=True, text=True)


def tool_result(requests: list[dict], call_id: str) -> str:
    for request in requests:
        for message in request["body"].get("messages", []):
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                content = message.get("content")
                return "".join(p.get("text", "") for p in content) if isinstance(content, list) else str(content)
    raise AssertionError(f"no tool result for {call_id}")


def assert_continued_with_the_feedback(workspace: Path, requests: list[dict], writer: str) -> None:
    """`vacant do`'s two rounds in one session: the planted error, provable at `writer`, its
    feedback in a request to the model, then green."""
    log = log_of(workspace)
    assert rounds(log) == [(1, "continue"), (2, "green")]
    assert len({r["session"] for r in log if r["type"] == "run_start"}) == 1
    (finding,) = report(workspace, 1)["findings"]
    assert (finding["level"], finding["tool"]) == ("provable", writer)
    assert any(finding["id"] in chat_request_text(r) for r in requests if FEEDBACK in chat_request_text(r))
