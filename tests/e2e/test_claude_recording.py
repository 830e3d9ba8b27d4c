"""The real `claude` binary, vacant's hooks installed by `vacant init`, a scripted fake upstream:
each scenario asserts the exact steps, reads, change deltas and actor cells in `vacant log --json`."""

from __future__ import annotations

import pytest
import xxhash
from claude_harness import tool, turn
from harness import BEHIND_THE_BACK, assert_out_of_band, summary, text
from vacant_run import run_scripted

pytestmark = pytest.mark.e2e
MODEL = "claude-opus-4-8"  # what the fake upstream echoes back: the model claude asked for


def assert_clean(run) -> None:
    assert run.process.returncode == 0, run.process.stderr
    assert run.errors() == "", run.errors()


def test_write_edit_read(tmp_path):
    ws = tmp_path / "ws"
    run = run_scripted(tmp_path, [
        turn(tool("Write", file_path=str(ws / "hello.py"), content="print('hello')\n")),
        turn(tool("Edit", file_path=str(ws / "hello.py"), old_string="hello", new_string="world")),
        turn(tool("Read", file_path=str(ws / "hello.py"))),
        turn(text("All done.")),
    ])
    assert_clean(run)
    steps = run.steps()
    assert summary(steps) == [
        ("Write", "ok", None, ["hello.py"]),
        ("Edit", "ok", None, ["hello.py"]),
        ("Read", "ok", None, []),
    ]
    write, edit, read = steps
    assert list(write.changes[0]["added"]) == ["hello.py"]
    assert write.changes[0]["added"]["hello.py"][3] == xxhash.xxh3_128_hexdigest(b"print('hello')\n")
    assert edit.changes[0]["changed"]["hello.py"][3] == xxhash.xxh3_128_hexdigest(b"print('world')\n")
    assert [(r["origin"], r["ref"]) for r in read.reads] == [("file", "hello.py")]
    assert read.reads[0]["object"] == xxhash.xxh3_128_hexdigest(b"print('world')\n")
    for step in steps:
        assert step.actor == {"platform": "claude-code", "agent_definition": "main", "model": MODEL,
                              "task_family": "general"}
    types = [r["type"] for r in run.log()]
    assert types[0] == "run_start" and "stop" in types and types[-1] == "run_end"
    prompt_reads = [r for r in run.log() if r["type"] == "read" and r["origin"] == "prompt"]
    assert len(prompt_reads) == 1


def test_bash_creates_file_fails_and_missing_read(tmp_path):
    ws = tmp_path / "ws"
    run = run_scripted(tmp_path, [
        turn(tool("Bash", command="echo made > made.txt", description="make")),
        turn(tool("Bash", command="echo to-stderr >&2; exit 3", description="fail")),
        turn(tool("Read", file_path=str(ws / "missing.txt"))),
        turn(text("done")),
    ])
    assert_clean(run)
    steps = run.steps()
    assert summary(steps) == [
        ("Bash", "ok", 0, ["made.txt"]),
        ("Bash", "failed", 3, []),
        ("Read", "failed", None, []),
    ]
    made, failed, missing = steps
    assert made.changes[0]["added"]["made.txt"][3] == xxhash.xxh3_128_hexdigest(b"made\n")
    assert [r["origin"] for r in failed.reads] == ["command"]
    assert missing.reads == []


def test_denied_and_invalid_calls_are_not_run_steps(tmp_path):
    ws = tmp_path / "ws"
    outside = tmp_path / "outside.txt"
    run = run_scripted(tmp_path, [
        turn(tool("Write", file_path=str(outside), content="escape\n")),
        turn(tool("Edit", file_path=str(ws / "nope.txt"), old_string="a", new_string="b")),
        turn(text("done")),
    ])
    assert_clean(run)
    assert not outside.exists()
    steps = run.steps()
    assert [(s.tool, s.outcome) for s in steps] == [("Write", "not-run"), ("Edit", "not-run")]
    assert all(s.changes == [] for s in steps)
    assert all(s.detail for s in steps)  # what the model was told instead


def test_parallel_reads_and_bash_overlap(tmp_path):
    ws = tmp_path / "ws"
    run = run_scripted(tmp_path, [
        turn(
            tool("Read", file_path=str(ws / "a.txt")),
            tool("Read", file_path=str(ws / "b.txt")),
            tool("Bash", command="sleep 0.5 && echo x", description="x"),
            tool("Bash", command="sleep 0.5 && echo y", description="y"),
        ),
        turn(text("done")),
    ], files={"a.txt": "A\n", "b.txt": "B\n"})
    assert_clean(run)
    steps = run.steps()
    assert sorted((s.tool, s.outcome) for s in steps) == [("Bash", "ok"), ("Bash", "ok"), ("Read", "ok"), ("Read", "ok")]
    assert len({s.key for s in steps}) == 4
    assert any(s.open_at_start for s in steps), "the parallel group's steps must be recorded as overlapping"
    reads = sorted((r["origin"], r["ref"]) for s in steps for r in s.reads)
    assert reads == [("command", "sleep 0.5 && echo x"), ("command", "sleep 0.5 && echo y"),
                     ("file", "a.txt"), ("file", "b.txt")]
    assert all(s.changes == [] for s in steps)


def test_subagents_builtin_and_custom_write_files(tmp_path):
    ws = tmp_path / "ws"
    checker = "---\nname: checker\ndescription: checks things\nmodel: haiku\ntools: Write, Read\n---\nYou check.\n"
    run = run_scripted(tmp_path, [
        turn(tool("Agent", description="write alpha", prompt="SUBTASK-ALPHA: write alpha.txt",
                  subagent_type="general-purpose")),
        turn(tool("Write", file_path=str(ws / "alpha.txt"), content="alpha\n"), match="SUBTASK-ALPHA"),
        turn(text("alpha done"), match="SUBTASK-ALPHA"),
        turn(tool("Agent", description="write beta", prompt="SUBTASK-BETA: write beta.txt", subagent_type="checker")),
        turn(tool("Write", file_path=str(ws / "beta.txt"), content="beta\n"), match="SUBTASK-BETA"),
        turn(text("beta done"), match="SUBTASK-BETA"),
        turn(text("All done.")),
    ], files={".claude/agents/checker.md": checker})
    assert_clean(run)
    steps = run.steps()
    assert summary(steps) == [
        ("Agent", "ok", None, []),
        ("Write", "ok", None, ["alpha.txt"]),
        ("Agent", "ok", None, []),
        ("Write", "ok", None, ["beta.txt"]),
    ]
    agent_a, write_a, agent_b, write_b = steps
    assert write_a.agent_id and write_a.actor["agent_definition"] == "general-purpose"
    assert write_b.agent_id and write_b.actor["agent_definition"] == "checker"
    assert write_a.actor["model"] == MODEL
    assert write_b.actor["model"].startswith("claude-haiku"), write_b.actor
    assert agent_a.actor["agent_definition"] == "main"
    assert write_a.open_at_start == [agent_a.number]  # inside the Agent step, which writes nothing
    assert [r["origin"] for r in agent_b.reads] == ["subagent"]
    subagent_events = [(r["agent_type"], r["phase"]) for r in run.log() if r["type"] == "subagent"]
    assert subagent_events == [("general-purpose", "start"), ("general-purpose", "stop"),
                               ("checker", "start"), ("checker", "stop")]


def test_change_by_another_process_is_out_of_band(tmp_path):
    ws = tmp_path / "ws"
    run = run_scripted(tmp_path, [
        turn(tool("Write", file_path=str(ws / "a.txt"), content="agent\n")),
        # the upstream process (not any tool) rewrites notes.txt before answering
        turn(tool("Bash", command="cat a.txt", description="look"), write_files={str(ws / "notes.txt"): BEHIND_THE_BACK}),
        turn(text("done")),
    ], files={"notes.txt": "original\n"})
    assert_clean(run)
    assert_out_of_band(run.steps(), "Write")
