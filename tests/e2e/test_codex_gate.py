"""The confirmation gate with the real `codex` binary: the same marker test as on Claude Code.

An ACT arm whose only effect is to write a marker file: without an answer Codex gets the
needs-confirm result (`Command blocked by PreToolUse hook: {…"performed": false…}`) and the marker
is not written; approved from the shell (the agent's HOME, so the same signing key), the resumed
session (`codex exec resume <id>`) runs it exactly once. No bypass flag is passed: the hooks fire
because `vacant init` trusted them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from codex_harness import (
    BIN,
    CodexScratch,
    FakeResponses,
    codex_binary,
    codex_env,
    make_codex_workspace,
    patch,
    run_codex_exec,
    shell,
    turn,
    vacant,
)
from harness import LOOK, MARK, marks, text

from vacant.policy.gate.asks.answer import AGENT_ENV
from vacant.policy.gate.asks.consult import WHY
from vacant.policy.gate.rules import ANSWER_REFUSAL
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e

BLOCKED = "Command blocked by PreToolUse hook: "


def outputs(upstream: FakeResponses) -> dict[str, str]:
    """call_id -> the output text Codex sent back to the model."""
    found: dict[str, str] = {}
    for request in upstream.requests():
        for item in request["body"].get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                if isinstance(output, dict):
                    output = output.get("content") or json.dumps(output)
                if isinstance(output, list):
                    output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
                found[item["call_id"]] = output
    return found


def blocked_payload(output: str) -> dict:
    assert output.startswith(BLOCKED), output
    payload, _ = json.JSONDecoder().raw_decode(output[len(BLOCKED):])
    return payload


def resume(ws: Path, scratch: CodexScratch, upstream: FakeResponses, session: str, prompt: str):
    import subprocess

    cmd = [str(codex_binary()), "exec", "resume", "-c", 'sandbox_mode="workspace-write"',
           "-c", f"model_providers.fake.base_url={json.dumps(upstream.base_url)}", session, prompt]
    return subprocess.run(cmd, cwd=str(ws), env=codex_env(scratch.home, scratch.codex_home, scratch.vacant_home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)


def person_env(scratch: CodexScratch) -> dict:
    env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    return {k: v for k, v in env.items() if k not in AGENT_ENV}


def log(ws: Path, env: dict) -> list[dict]:
    return [json.loads(line) for line in vacant(["log", "--json"], ws, env=env).stdout.splitlines() if line.strip()]


def test_act_arm_marker_on_codex(scratch):
    ws = make_codex_workspace(scratch, {"arms/mark.sh": MARK, "arms/look.sh": LOOK, "notes.txt": "notes\n"})
    person = person_env(scratch)
    turns = [
        turn(shell("sh arms/mark.sh", "call_mark_1")),
        turn(shell("sh arms/look.sh", "call_look_1"), match="performed"),
        turn(patch("*** Begin Patch\n*** Add File: arms/nomode.sh\n+echo no mode\n*** End Patch\n", "call_patch_1")),
        turn(shell(f"{BIN}/vacant approve ask#1", "call_self_1")),
        turn(text("I asked the person to answer ask#1.")),
        turn(shell("sh arms/mark.sh", "call_mark_2"), match="SESSION-TWO"),
        turn(shell("sh arms/mark.sh", "call_mark_3")),
        turn(text("Marked once.")),
        turn(shell("sh arms/mark.sh", "call_mark_4"), match="SESSION-THREE"),
        turn(text("The approval went stale.")),
    ]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        first = run_codex_exec(ws, scratch.codex_home, upstream, "mark the file", home=scratch.home,
                               vacant_home=scratch.vacant_home)
        assert first.returncode == 0, first.stderr
        assert "bypass-hook-trust" not in first.stderr

        # -- without approval: pause_surfaced, no marker, the model told performed: false
        assert marks(ws) == []
        records = log(ws, person)
        runs = {r["run"] for r in records if r["type"] == "run_start"}
        assert len(runs) == 1
        session = runs.pop()
        paused = [r for r in records if r["type"] == "pause_surfaced"]
        assert [(p["ask"], p["code"]) for p in paused] == [("ask#1", "NEEDS_CONFIRM")]
        seen = outputs(upstream)
        payload = blocked_payload(seen["call_mark_1"])
        assert payload["performed"] is False and payload["why"] == WHY and payload["askId"] == "ask#1"
        assert payload["receipts"]["arm"] == ["arms/mark.sh"]
        assert os.path.realpath(payload["receipts"]["cwd"]) == os.path.realpath(ws)

        # -- a READ arm runs; an arm without a mode line is refused; the agent cannot answer itself
        assert "looked-around" in seen["call_look_1"]
        assert not (ws / "arms" / "nomode.sh").exists()
        assert seen["call_patch_1"].startswith(
            BLOCKED + "Refusing to write arms/nomode.sh — it must include a `MODE: READ` or `MODE: ACT` line")
        assert seen["call_self_1"].startswith(BLOCKED + ANSWER_REFUSAL)
        waiting = json.loads(vacant(["asks", "--json"], ws, env=person).stdout)
        assert [(c["id"], c["fate"]) for c in waiting] == [("ask#1", "awaiting-human")]

        # -- approved from the shell; resumed: human_decided -> step start -> step end, marker once
        vacant(["approve", "ask#1"], ws, env=person)
        second = resume(ws, scratch, upstream, session, "SESSION-TWO: go on")
        assert second.returncode == 0, second.stderr
        assert marks(ws) == ["marked"]
        records = log(ws, person)
        decided = next(i for i, r in enumerate(records) if r["type"] == "human_decided")
        start = next(i for i, r in enumerate(records) if i > decided and r["type"] == "step_start")
        assert records[start]["input"]["command"] == "sh arms/mark.sh"
        step = records[start]["step"]
        end = next(i for i, r in enumerate(records) if r["type"] == "step_end" and r["step"] == step)
        assert decided < start < end and records[end]["outcome"] == "ok"
        seen = outputs(upstream)
        assert not seen["call_mark_2"].startswith(BLOCKED)
        assert blocked_payload(seen["call_mark_3"])["askId"] == "ask#2"  # spent: it does not run twice
        card = json.loads(vacant(["ask", "ask#1", "--json"], ws, env=person).stdout)
        assert card["fate"] == "spent" and card["spent"]["step"]["id"] == f"{session}#{step}"

        # -- stale: approved with --refuse-if-moved, then the workspace changes
        vacant(["approve", "ask#2", "--refuse-if-moved"], ws, env=person)
        (ws / "notes.txt").write_text("changed after the approval\n")
        third = resume(ws, scratch, upstream, session, "SESSION-THREE: go on")
        assert third.returncode == 0, third.stderr
        assert marks(ws) == ["marked"]
        stale = blocked_payload(outputs(upstream)["call_mark_4"])
        assert stale["code"] == "APPROVAL_STALE" and stale["stale"]["askId"] == "ask#2"
        assert "ask#2  stale" in vacant(["ask", "ask#2"], ws, env=person).stdout
    assert not (state_dir(ws) / "errors.log").exists()
