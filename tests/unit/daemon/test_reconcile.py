"""Steps that reached no hook are reconciled at Stop from Claude's transcript: recorded as such,
their changes owned by them, and read_coverage says why."""

from __future__ import annotations

import json
from pathlib import Path

from vacant.hook import call as hook
from vacant.attribute.stop import read_coverage
from vacant.core import events
from vacant.store.run import RunView


def call(root: Path, transcript: Path, event: str, **fields) -> str:
    body = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(root), "hook_event_name": event, **fields}
    stdout, _ = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(root), "VACANT_DO": "1"})
    return stdout


def line(role: str, block: dict) -> str:
    kind = "assistant" if role == "assistant" else "user"
    return json.dumps({"type": kind, "message": {"role": role, "content": [block]}})


def test_a_step_no_hook_saw_is_found_in_the_transcript_at_stop(tmp_path):
    root = tmp_path / "ws"
    (root / ".vacant").mkdir(parents=True)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    call(root, transcript, "SessionStart", source="startup")
    # seen: t1 (Pre and Post); unseen: t2 (no hook at all), t3 (Pre only: its Post went nowhere)
    call(root, transcript, "PreToolUse", tool_name="Bash", tool_use_id="t1", tool_input={"command": "true"})
    call(root, transcript, "PostToolUse", tool_name="Bash", tool_use_id="t1", tool_input={"command": "true"},
         tool_response={"stdout": ""})
    call(root, transcript, "PreToolUse", tool_name="Write", tool_use_id="t3",
         tool_input={"file_path": str(root / "c.txt"), "content": "c"})
    (root / "b.txt").write_text("written by the unseen step")
    (root / "c.txt").write_text("c")
    transcript.write_text("\n".join([
        line("assistant", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "true"}}),
        line("user", {"type": "tool_result", "tool_use_id": "t1", "content": ""}),
        line("assistant", {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "echo > b.txt"}}),
        line("user", {"type": "tool_result", "tool_use_id": "t2", "content": "", "is_error": True}),
        line("assistant", {"type": "tool_use", "id": "t3", "name": "Write", "input": {"file_path": "c.txt"}}),
        line("user", {"type": "tool_result", "tool_use_id": "t3", "content": "ok"}),
    ]) + "\n")
    call(root, transcript, "Stop", stop_hook_active=False)
    records = events.load(root / ".vacant" / "runs" / "s1" / "events.jsonl")
    starts = {r["key"]: r["step"] for r in records if r["type"] == "step_start"}
    ends = {r["key"]: r for r in records if r["type"] == "step_end"}
    assert set(starts) == {"main/t1", "main/t2", "main/t3"}
    assert ends["main/t2"]["outcome"] == "failed" and ends["main/t2"]["reconciled"] == "transcript"
    assert ends["main/t3"]["outcome"] == "ok" and ends["main/t3"]["reconciled"] == "transcript"
    assert "reconciled" not in ends["main/t1"]
    owner = {rel: r["step"] for r in records if r["type"] == "change" for rel in r["added"]}
    assert owner["b.txt"] == starts["main/t2"]  # only the unseen shell step could have written it
    shared = next(r for r in records if r["type"] == "change" and "c.txt" in r["added"])
    assert shared["step"] is None  # t2 (any path) or t3 (its target): shared, no one's alone
    assert {starts["main/t2"], starts["main/t3"]} <= set(shared["open_steps"])
    coverage = read_coverage(RunView.load(root / ".vacant" / "runs" / "s1"))
    assert coverage["state"] == "partial" and "reached no hook" in coverage["why"]
