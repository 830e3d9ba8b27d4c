"""The confirmation gate with the real `claude` binary: an ACT arm whose only effect is to write a
marker file never runs without the person's answer, runs exactly once after it, and the model is
told, in the tool result it gets, that nothing was done and that this is a question for a person.

One scripted upstream serves every session (`claude -p`, then `claude -p --resume <id>`); the
person's answers are given from the shell by the test, with the agent's HOME (same signing key)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from harness import LOOK, MARK, marks, text
from vacant_run import make_workspace, vacant

from vacant.policy.gate.asks.answer import AGENT_ENV
from vacant.policy.gate.asks.consult import WHY
from vacant.policy.gate.rules import ANSWER_REFUSAL
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e

def person_env(home: Path) -> dict:
    """The person's shell: the agent's HOME (so the signing key is the one the hook verifies with)."""
    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV and not k.startswith("CLAUDE")}
    return {**env, "HOME": str(home), "VACANT_HOME": str(home / "vacant-data")}


def tool_results(upstream: FakeUpstream) -> dict[str, tuple[str, bool]]:
    """tool_use_id -> (the text the model got, is_error), from the requests claude sent."""
    out: dict[str, tuple[str, bool]] = {}
    for request in upstream.requests():
        for message in request["body"].get("messages", []):
            if not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if block.get("type") != "tool_result":
                    continue
                content = block.get("content")
                if isinstance(content, list):
                    content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
                out[block["tool_use_id"]] = (content, bool(block.get("is_error")))
    return out


def tool_use_ids(upstream: FakeUpstream, command: str) -> list[str]:
    """The ids of the Bash calls with this command, in the order the model made them."""
    ids: list[str] = []
    for request in upstream.requests():
        for message in request["body"].get("messages", []):
            if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if (block.get("type") == "tool_use" and block.get("input", {}).get("command") == command
                        and block["id"] not in ids):
                    ids.append(block["id"])
    return ids


def log(ws: Path) -> list[dict]:
    out = vacant(["log", "--json"], ws).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_act_arm_marker_pause_approve_once_stale_and_ids(tmp_path):
    ws, home = make_workspace(tmp_path, {"arms/mark.sh": MARK, "arms/look.sh": LOOK, "notes.txt": "notes\n"})
    person = person_env(home)
    turns = [
        # session 1: the pause, a READ arm, an arm without a mode line, the agent answering itself
        turn(tool("Bash", command="sh arms/mark.sh", description="mark")),
        turn(tool("Bash", command="sh arms/look.sh", description="look"), match="performed"),
        turn(tool("Write", file_path=str(ws / "arms" / "nomode.sh"), content="echo no mode\n")),
        turn(tool("Bash", command="vacant approve ask#1", description="approve it myself")),
        turn(text("I asked the person to answer ask#1.")),
        # session 2 (resumed, after the approval): runs once; a second call pauses again
        turn(tool("Bash", command="sh arms/mark.sh", description="mark"), match="SESSION-TWO"),
        turn(tool("Bash", command="sh arms/mark.sh", description="mark again")),
        turn(text("Marked once.")),
        # session 3 (resumed, after an approval with --refuse-if-moved and a change): stale
        turn(tool("Bash", command="sh arms/mark.sh", description="mark"), match="SESSION-THREE"),
        turn(text("The approval went stale.")),
        # session 4: a new run, so that `step#1` names two steps
        turn(tool("Bash", command="echo another run", description="echo"), match="SESSION-FOUR"),
        turn(text("Done.")),
    ]
    upstream = FakeUpstream({"turns": turns}, tmp_path / "upstream")
    with upstream:
        first = run_claude_p(ws, home, upstream, "mark the file")
        assert first.returncode == 0, first.stderr
        session = json.loads(first.stdout)["session_id"]

        # -- called without approval: pause_surfaced, no marker, the model told performed: false
        assert marks(ws) == []
        records = log(ws)
        paused = [r for r in records if r["type"] == "pause_surfaced"]
        assert [(p["ask"], p["code"], p["status"]) for p in paused] == [("ask#1", "NEEDS_CONFIRM", "awaiting-human")]
        assert paused[0]["receipts"]["arm"] == ["arms/mark.sh"]
        results = tool_results(upstream)
        mark_ids = tool_use_ids(upstream, "sh arms/mark.sh")
        content, is_error = results[mark_ids[0]]
        payload = json.loads(content)
        assert is_error and payload["performed"] is False and payload["status"] == "needs-confirm"
        assert payload["why"] == WHY and payload["askId"] == "ask#1"
        assert payload["receipts"]["cwd"] == str(ws) and payload["receipts"]["command"] == "sh arms/mark.sh"
        assert "vacant approve ask#1" in payload["howToAct"]

        # -- a READ arm runs without a pause
        look_content, look_error = results[tool_use_ids(upstream, "sh arms/look.sh")[0]]
        assert not look_error and "looked-around" in look_content

        # -- an arm written without a mode line is refused; nothing is written
        assert not (ws / "arms" / "nomode.sh").exists()
        refusals = [c for c, err in results.values() if err and c.startswith("Refusing to write")]
        assert refusals and refusals[0].startswith(
            "Refusing to write arms/nomode.sh — it must include a `MODE: READ` or `MODE: ACT` line")

        # -- the agent calling `vacant approve` through Bash is refused; the card still waits
        approve_result = results[tool_use_ids(upstream, "vacant approve ask#1")[0]]
        assert approve_result == (ANSWER_REFUSAL, True)
        waiting = json.loads(vacant(["asks", "--json"], ws, env=person).stdout)
        assert [(c["id"], c["fate"]) for c in waiting] == [("ask#1", "awaiting-human")]

        # -- approved from the shell; the agent calls again: human_decided -> step start -> step end
        approved = vacant(["approve", "ask#1"], ws, env=person)
        assert "approved ask#1" in approved.stdout
        second = run_claude_p(ws, home, upstream, "SESSION-TWO: go on", extra_args=("--resume", session))
        assert second.returncode == 0, second.stderr
        assert marks(ws) == ["marked"]  # ran once; the second call paused again (a spent approval)
        records = log(ws)
        decided = next(i for i, r in enumerate(records) if r["type"] == "human_decided")
        assert records[decided]["ask"] == "ask#1" and records[decided]["decision"] == "approved"
        start = next(i for i, r in enumerate(records) if i > decided and r["type"] == "step_start")
        assert records[start]["input"]["command"] == "sh arms/mark.sh"
        step = records[start]["step"]
        end = next(i for i, r in enumerate(records) if r["type"] == "step_end" and r["step"] == step)
        assert decided < start < end and records[end]["outcome"] == "ok" and records[end]["exit_code"] == 0
        mark_ids = tool_use_ids(upstream, "sh arms/mark.sh")
        assert len(mark_ids) == 3
        assert tool_results(upstream)[mark_ids[1]][1] is False
        spent_again = json.loads(tool_results(upstream)[mark_ids[2]][0])
        assert spent_again["askId"] == "ask#2" and spent_again["performed"] is False
        card = json.loads(vacant(["ask", "ask#1", "--json"], ws, env=person).stdout)
        assert card["fate"] == "spent" and card["spent"]["step"]["id"] == f"{session}#{step}"
        assert card["spent"]["step"]["outcome"] == "ok" and card["spent"]["step"]["state"] == "settled"

        # -- a stale approval is refused with APPROVAL_STALE, and the card says so
        vacant(["approve", "ask#2", "--refuse-if-moved"], ws, env=person)
        (ws / "notes.txt").write_text("the person changed this after approving\n")
        third = run_claude_p(ws, home, upstream, "SESSION-THREE: go on", extra_args=("--resume", session))
        assert third.returncode == 0, third.stderr
        assert marks(ws) == ["marked"]
        stale_id = tool_use_ids(upstream, "sh arms/mark.sh")[3]
        stale_content, stale_error = tool_results(upstream)[stale_id]
        stale = json.loads(stale_content)
        assert stale_error and stale["code"] == "APPROVAL_STALE" and stale["performed"] is False
        assert stale["stale"]["askId"] == "ask#2" and "moved" in stale["stale"]["reason"]
        shown = vacant(["ask", "ask#2"], ws, env=person).stdout
        assert "ask#2  stale" in shown and "APPROVAL_STALE" in shown and "ask#3" in shown

        # -- unknown and ambiguous ids
        fourth = run_claude_p(ws, home, upstream, "SESSION-FOUR: something else")
        assert fourth.returncode == 0, fourth.stderr
    unknown = vacant(["ask", "ask#99"], ws, env=person, check=False)
    assert unknown.returncode == 3
    assert "pending steps" in unknown.stderr and "steps awaiting settlement" in unknown.stderr
    assert "cards awaiting a person: 1" in unknown.stderr and "ask#3" in unknown.stderr
    ambiguous = vacant(["ask", "step#1"], ws, env=person, check=False)
    assert ambiguous.returncode == 3 and "names 2 things" in ambiguous.stderr
    assert vacant(["ask", f"{session}#1"], ws, env=person).returncode == 0
    assert (state_dir(ws) / "errors.log").exists() is False
