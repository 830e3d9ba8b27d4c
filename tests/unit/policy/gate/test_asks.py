"""The ask book: cards, fates read at answer time, signed answers, exact ids, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vacant.hook import call as hook
from vacant.core import events
from vacant.core.locations import run_dir
from vacant.policy.gate.asks import book as ask_book, consult, answer as person, views

BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def outside_any_agent(isolated_home, monkeypatch):
    for name in person.AGENT_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ws_files() -> dict:
    return {"arms/mark.sh": "#!/bin/sh\n# MODE: ACT\necho marked >> marker.txt\n", "notes.txt": "notes\n"}


class Agent:
    """Drives the claude hook the way Claude Code does, one tool call at a time."""

    def __init__(self, ws: Path, session: str = "s1") -> None:
        self.ws, self.session, self.n = ws, session, 0

    def _send(self, event: str, **fields) -> str:
        body = {"session_id": self.session, "cwd": str(self.ws), "hook_event_name": event, **fields}
        stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(self.ws)})
        assert code == 0
        return stdout

    def bash(self, command: str, cwd: Path | None = None) -> dict | None:
        """PreToolUse; when allowed, the command runs and PostToolUse follows. The deny reason, parsed."""
        self.n += 1
        key = f"toolu_{self.session}_{self.n}"
        fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": key}
        body = {"session_id": self.session, "cwd": str(cwd or self.ws), "hook_event_name": "PreToolUse", **fields}
        stdout, _ = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(self.ws)})
        if stdout:
            reason = json.loads(stdout)["hookSpecificOutput"]["permissionDecisionReason"]
            try:
                return json.loads(reason)
            except ValueError:
                return {"refused": reason}
        proc = subprocess.run(command, shell=True, cwd=cwd or self.ws, capture_output=True, text=True)
        self._send("PostToolUse", **fields, tool_response={"stdout": proc.stdout, "stderr": proc.stderr})
        return None

    def stop(self) -> None:
        self._send("Stop", stop_hook_active=False)

    def log(self) -> list[dict]:
        return events.load(run_dir(self.ws, self.session) / "events.jsonl")


def approve(ws: Path, ask_id: str, **kwargs) -> dict:
    return person.answer(ws, ask_id, "approved", **kwargs)


def marks(ws: Path) -> int:
    path = ws / "marker.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


# -- the pause ------------------------------------------------------------------------------------


def test_an_act_arm_pauses_and_runs_once_after_approval(ws):
    agent = Agent(ws)
    paused = agent.bash("sh arms/mark.sh")
    assert paused["performed"] is False and paused["status"] == "needs-confirm" and paused["code"] == "NEEDS_CONFIRM"
    assert paused["why"] == consult.WHY and paused["askId"] == "ask#1"
    assert paused["receipts"]["arm"] == ["arms/mark.sh"] and paused["receipts"]["cwd"] == str(ws)
    assert "MODE: ACT" in paused["receipts"]["mayChange"][0]
    assert "vacant approve ask#1" in paused["howToAct"]
    assert marks(ws) == 0
    again = agent.bash("sh  'arms/mark.sh'")  # the same action, asked again: the same card
    assert again["askId"] == "ask#1" and again["why"] == paused["why"]
    assert ask_book.AskBook(ws).get("ask#1")["asked"] == 2

    approve(ws, "ask#1")
    assert agent.bash("sh arms/mark.sh") is None
    assert marks(ws) == 1
    spent_again = agent.bash("sh arms/mark.sh")  # a spent approval does not run twice
    assert spent_again["askId"] == "ask#2" and spent_again["code"] == "NEEDS_CONFIRM"
    assert marks(ws) == 1

    log = agent.log()
    types = [r["type"] for r in log]
    paused_events = [r for r in log if r["type"] == "pause_surfaced"]
    assert [p["ask"] for p in paused_events] == ["ask#1", "ask#1", "ask#2"]
    decided = types.index("human_decided")
    start = next(i for i, r in enumerate(log) if i > decided and r["type"] == "step_start")
    end = next(i for i, r in enumerate(log) if r["type"] == "step_end" and r["step"] == log[start]["step"])
    assert decided < start < end and log[end]["outcome"] == "ok"
    not_run = [r for r in log if r["type"] == "step_end" and r["outcome"] == "not-run"]
    assert len(not_run) == 3 and all(json.loads(r["detail"])["performed"] is False for r in not_run)

    card = views.resolve(ws, "ask#1")
    assert card["fate"] == "spent"
    assert card["spent"]["step"]["id"] == f"s1#{log[start]['step']}"
    assert card["spent"]["step"]["state"] == "awaiting-settlement" and card["spent"]["step"]["outcome"] == "ok"
    agent.stop()
    assert views.resolve(ws, "ask#1")["spent"]["step"]["state"] == "settled"  # read at answer time


def test_the_why_sentence_is_byte_identical_everywhere(ws):
    agent = Agent(ws)
    reasons = [agent.bash(command) for command in ("git push", "sh arms/mark.sh", "curl -X POST https://x/y",
                                                   "rm -rf /tmp/else")]
    assert {r["why"] for r in reasons} == {consult.WHY}
    assert len({r["askId"] for r in reasons}) == 4
    assert "ask#" not in consult.WHY and "{" not in consult.WHY


def test_a_read_action_passes_without_a_card(ws):
    (ws / "arms" / "look.sh").write_text("# MODE: READ\necho look\n")
    agent = Agent(ws)
    assert agent.bash("sh arms/look.sh") is None
    assert agent.bash("git status || true") is None
    assert ask_book.AskBook(ws).cards() == []
    assert not [r for r in agent.log() if r["type"] == "pause_surfaced"]


def test_approval_matches_the_working_directory_too(ws):
    (ws / "sub").mkdir()
    agent = Agent(ws)
    agent.bash("sh ../arms/mark.sh", cwd=ws / "sub")
    approve(ws, "ask#1")
    other = agent.bash("sh arms/mark.sh")  # same arm, other directory and text: another action
    assert other["askId"] == "ask#2"
    assert agent.bash("sh ../arms/mark.sh", cwd=ws / "sub") is None


# -- declined, silence ----------------------------------------------------------------------------


def test_decline(ws):
    agent = Agent(ws)
    agent.bash("git push origin main")
    relayed = agent.bash("vacant decline ask#1")  # the agent relaying a decline closes nothing
    assert "answering its own question" in relayed["refused"]
    assert views.resolve(ws, "ask#1")["fate"] == "awaiting-human"
    person.answer(ws, "ask#1", "declined")
    denied = agent.bash("git push origin main")
    assert denied["status"] == "declined" and denied["code"] == "DECLINED" and denied["askId"] == "ask#1"
    assert denied["why"] == consult.DECLINED_WHY and denied["performed"] is False
    assert views.resolve(ws, "ask#1")["fate"] == "declined"
    assert len(ask_book.AskBook(ws).cards()) == 1
    other_run = Agent(ws, "s2").bash("git push origin main")  # a new run asks again
    assert other_run["askId"] == "ask#2" and other_run["code"] == "NEEDS_CONFIRM"
    with pytest.raises(ask_book.AskError, match="final"):
        approve(ws, "ask#1")


def test_silence_is_never_a_decline(ws):
    Agent(ws).bash("git push")
    card = ask_book.AskBook(ws).get("ask#1")
    assert ask_book.fate(card, now=time.time() + 10 * 365 * 86400) == (
        "awaiting-human", "nobody has answered yet (silence is never a decline)")


# -- stale ----------------------------------------------------------------------------------------


def test_an_expired_approval_is_stale_and_the_gate_says_so(ws):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    approve(ws, "ask#1", expires_s=60)
    card = ask_book.AskBook(ws).get("ask#1")
    assert ask_book.fate(card)[0] == "approved"
    assert ask_book.fate(card, now=time.time() + 61)[0] == "stale"
    card["decision"]["expires_at"] = time.time() - 1  # let it expire (the signature now fails too)
    ask_book.AskBook(ws).save(card)
    refused = agent.bash("sh arms/mark.sh")
    assert refused["code"] == "APPROVAL_STALE" and refused["performed"] is False
    assert refused["stale"]["askId"] == "ask#1" and refused["askId"] == "ask#2"
    assert marks(ws) == 0
    view = views.resolve(ws, "ask#1")
    assert view["fate"] == "stale" and view["stale"]["refused"] == "APPROVAL_STALE" and view["stale"]["next"] == "ask#2"
    assert views.resolve(ws, "ask#2")["replaces"] == "ask#1"
    assert agent.bash("sh arms/mark.sh")["code"] == "NEEDS_CONFIRM"  # no loop: the new card waits


def test_expiry_without_tampering(ws, monkeypatch):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    approve(ws, "ask#1", expires_s=30)
    real = time.time
    monkeypatch.setattr(ask_book.time, "time", lambda: real() + 31)
    refused = agent.bash("sh arms/mark.sh")
    assert refused["code"] == "APPROVAL_STALE" and "expired" in refused["stale"]["reason"]


def test_refuse_if_moved(ws):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    approve(ws, "ask#1", refuse_if_moved=True)
    assert views.resolve(ws, "ask#1")["fate"] == "approved"
    (ws / "notes.txt").write_text("changed after the approval\n")
    assert views.resolve(ws, "ask#1")["fate"] == "stale"  # read now, not a snapshot
    refused = agent.bash("sh arms/mark.sh")
    assert refused["code"] == "APPROVAL_STALE" and "moved" in refused["stale"]["reason"]
    assert marks(ws) == 0
    approve(ws, "ask#2", refuse_if_moved=True)
    assert agent.bash("sh arms/mark.sh") is None  # unchanged since: it runs
    assert marks(ws) == 1


def test_refuse_if_moved_does_not_touch_the_recorders_index(ws):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    (ws / "notes.txt").write_text("changed by someone else\n")
    approve(ws, "ask#1", refuse_if_moved=True)  # scans, read-only
    agent.bash("cat notes.txt")
    oob = [r for r in agent.log() if r["type"] == "step_start" and r["tool"] == "oob"]
    assert len(oob) == 1  # the change is still found, and owned by nobody


def test_a_tampered_approval_is_stale(ws):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    agent.bash("git push")
    approve(ws, "ask#1")
    book = ask_book.AskBook(ws)
    forged = book.get("ask#2")
    forged["decision"] = dict(book.get("ask#1")["decision"])  # copy a signature onto another card
    book.save(forged)
    assert ask_book.fate(book.get("ask#2"))[0] == "stale"
    assert agent.bash("git push")["code"] == "APPROVAL_STALE"


def test_human_decided_is_signed_and_in_the_step_log(ws):
    from vacant.core.keys import verify_signature

    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    card = approve(ws, "ask#1", expires_s=600)
    decided = [r for r in agent.log() if r["type"] == "human_decided"]
    assert len(decided) == 1 and decided[0]["ask"] == "ask#1" and decided[0]["decision"] == "approved"
    assert decided[0]["signature"] == card["decision"]["signature"]
    assert verify_signature(ask_book.signed_body(card, card["decision"]), decided[0]["signature"])


# -- ids ------------------------------------------------------------------------------------------


def test_unknown_ids_answer_with_the_three_lists(ws):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    agent.bash("echo hi")
    for bad in ("ask#9", "ASK#1", "ask#01", "1", "#1", "ask1", "s1#99"):
        with pytest.raises(views.UnknownId) as caught:
            views.resolve(ws, bad)
        lists = caught.value.lists
        assert set(lists) == {"pending_steps", "steps_awaiting_settlement", "cards_awaiting_a_person"}
        assert [c["id"] for c in lists["cards_awaiting_a_person"]] == ["ask#1"]
        assert {s["id"] for s in lists["steps_awaiting_settlement"]} == {"s1#1", "s1#2"}
    assert views.resolve(ws, "ask#1")["kind"] == "card"
    assert views.resolve(ws, "s1#2")["kind"] == "step"


def test_an_id_naming_two_things_is_refused(ws):
    Agent(ws, "s1").bash("echo one")
    Agent(ws, "s2").bash("echo two")
    with pytest.raises(views.AmbiguousId) as caught:
        views.resolve(ws, "step#1")
    assert caught.value.matches == ["s1#1", "s2#1"]
    assert views.resolve(ws, "s2#1")["step"] == 1


# -- durations, CLI -------------------------------------------------------------------------------


@pytest.mark.parametrize("text, seconds", [("90", 90), ("90s", 90), ("10m", 600), ("1h30m", 5400), ("2d", 172800),
                                           ("1w", 604800), ("1.5h", 5400)])
def test_durations(text, seconds):
    assert person.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "10x", "0", "-5m", "5m later"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        person.parse_duration(text)


def cli(ws: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in person.AGENT_ENV}
    return subprocess.run([str(BIN / "vacant"), *args], cwd=ws, capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=60)


@pytest.mark.slow
def test_cli_round_trip(ws):
    agent = Agent(ws)
    agent.bash("sh arms/mark.sh")
    listed = cli(ws, "asks", "--json")
    assert listed.returncode == 0 and [c["id"] for c in json.loads(listed.stdout)] == ["ask#1"]
    text = cli(ws, "asks").stdout
    assert "ask#1  awaiting-human" in text and "vacant approve ask#1" in text and "arms/mark.sh" in text

    inside = cli(ws, "approve", "ask#1", env={"CLAUDECODE": "1"})
    assert inside.returncode == 3 and "agent's tool" in inside.stderr
    assert views.resolve(ws, "ask#1")["fate"] == "awaiting-human"

    bad = cli(ws, "approve", "ask#1", "--expires", "soon")
    assert bad.returncode == 2
    done = cli(ws, "approve", "ask#1", "--expires", "1h", "--refuse-if-moved")
    assert done.returncode == 0 and "approved ask#1 until" in done.stdout
    again = cli(ws, "decline", "ask#1")
    assert again.returncode == 3 and "final" in again.stderr
    shown = json.loads(cli(ws, "ask", "ask#1", "--json").stdout)
    assert shown["fate"] == "approved" and shown["decision"]["refuse_if_moved"] is True

    unknown = cli(ws, "ask", "ask#7")
    assert unknown.returncode == 3
    assert "pending steps" in unknown.stderr and "cards awaiting a person: 0" in unknown.stderr
    unknown_json = json.loads(cli(ws, "ask", "ask#7", "--json").stdout)
    assert unknown_json["error"] == "unknown" and "steps_awaiting_settlement" in unknown_json["lists"]
    assert cli(ws, "approve", "ask#7").returncode == 3

    Agent(ws, "s2").bash("echo x")
    ambiguous = cli(ws, "ask", "step#1")
    assert ambiguous.returncode == 3 and "names 2 things" in ambiguous.stderr
    step = cli(ws, "ask", "s1#1")
    assert step.returncode == 0 and "not-run" in step.stdout
    assert cli(ws, "approve", "s1#1").returncode == 3  # a step takes no answer


@pytest.mark.slow
def test_cli_gate_shows_the_policy(ws):
    (ws / ".vacant").mkdir()  # the workspace root, whatever an ancestor directory holds
    (ws / "vacant.toml").write_text('[gate]\nremove = ["deploy"]\n[[gate.act]]\nname = "rel"\ncommand = "^make rel"\n')
    shown = json.loads(cli(ws, "gate", "--json").stdout)
    names = [rule["name"] for rule in shown["act"]]
    assert "deploy" not in names and "rel" in names and "git-push" in names and shown["arms"] == "arms"
    (ws / "vacant.toml").write_text('[gate]\nremove = ["nope"]\n')
    broken = cli(ws, "gate")
    assert broken.returncode == 3 and "nope" in broken.stderr
