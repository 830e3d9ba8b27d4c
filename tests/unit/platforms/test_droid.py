"""Factory Droid's step key and its closing of calls no PostToolUse reported (vacant/platforms/droid.py).

Droid's payloads carry no tool-call id; its transcript holds each call (`tool_use {id, name, input}`)
before PreToolUse and the call's `tool_result` after PostToolUse (measured on droid 0.215.0). The
transcripts here are written in that order, with ids the test chose: the oracle."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.calls import HookCall
from vacant.platforms.droid import PLATFORM

CALLS = [("Execute", {"command": "make test", "riskLevel": "low"}), ("Read", {"file_path": "/w/a.py"}),
         ("Create", {"file_path": "/w/b.py", "content": "x = 1\n"})]


class Transcript:
    """A Droid session file, appended to as Droid does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text(json.dumps({"type": "session_start", "id": "s"}) + "\n")

    def add(self, role: str, block: dict, **extra: object) -> None:
        line = {"type": "message", "message": {"role": role, "content": [block], **extra}}
        with self.path.open("a") as handle:
            handle.write(json.dumps(line) + "\n")

    def call(self, call_id: str, tool: str, tool_input: dict) -> None:
        self.add("assistant", {"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}, modelId="m-1")

    def result(self, call_id: str, content: str, error: bool = False) -> None:
        self.add("user", {"type": "tool_result", "tool_use_id": call_id, "is_error": error, "content": content})


def payload(event: str, tool: str, tool_input: dict, transcript: Path, **extra: object) -> dict:
    return {"hook_event_name": event, "session_id": "s", "cwd": "/w", "transcript_path": str(transcript),
            "tool_name": tool, "tool_input": tool_input, **extra}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(range(len(CALLS))), min_size=1, max_size=8))
def test_pre_and_post_of_each_call_share_the_transcripts_id_and_repeats_do_not(tmp_path_factory, picks):
    transcript = Transcript(tmp_path_factory.mktemp("droid") / "session.jsonl")
    keys = []
    for n, pick in enumerate(picks):
        tool, tool_input = CALLS[pick]
        call_id = f"call_{n}"
        transcript.call(call_id, tool, tool_input)
        pre = PLATFORM.parse(payload("PreToolUse", tool, tool_input, transcript.path), {})
        post = PLATFORM.parse(payload("PostToolUse", tool, tool_input, transcript.path, tool_response="ok"), {})
        transcript.result(call_id, "ok")
        assert (pre.key, post.key, pre.model) == (call_id, call_id, "m-1")
        keys.append(pre.key)
    assert len(set(keys)) == len(picks)  # an identical call made again is a step of its own


def test_a_call_that_failed_with_no_post_is_closed_from_the_transcript(tmp_path):
    transcript = Transcript(tmp_path / "session.jsonl")
    transcript.call("call_1", "Execute", {"command": "exit 3"})
    pre = PLATFORM.parse(payload("PreToolUse", "Execute", {"command": "exit 3"}, transcript.path), {})
    later = HookCall("tool_pre", "s", Path("/w"), transcript_path=str(transcript.path))
    assert PLATFORM.settled(later, [pre.key]) == {}  # still running: no result yet
    transcript.result("call_1", "Error: Command failed (exit code: 3)\n\n[Process exited with code 3]", error=True)
    assert PLATFORM.settled(later, [pre.key, "call_other"]) == {"call_1": ("failed", 3)}


def test_without_a_readable_transcript_the_call_itself_is_the_key(tmp_path):
    first = PLATFORM.parse(payload("PreToolUse", *CALLS[0], tmp_path / "missing.jsonl"), {})
    again = PLATFORM.parse(payload("PostToolUse", *CALLS[0], tmp_path / "missing.jsonl", tool_response="x"), {})
    other = PLATFORM.parse(payload("PreToolUse", *CALLS[1], tmp_path / "missing.jsonl"), {})
    assert first.key == again.key != other.key and first.key.startswith("droid-")
