"""Class 5 of issue 11: a person's answers and flags cannot be reused or erased without the key.

The agent (the attacker here) can write any file of the state directory. The oracle is the
workspace itself: an approved action that ran once leaves one mark; after any tampering with the
card, its copy, or the spent ledger, the same action must not leave a second mark. A flag file
deleted, edited or swapped: the Stop report still holds the flag's finding (from the signed
ledger) and a `record` finding naming the flag, and the run is not green.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.hook import call as hook
from vacant.attribute.stop import stop
from vacant.core.locations import run_dir
from vacant.policy.gate.asks import book as ask_book, answer as person
from vacant.policy.contract.flags import add_flag, flags_dir

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture(autouse=True)
def outside_any_agent(monkeypatch):
    for name in person.AGENT_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ws_files() -> dict:
    return {"arms/mark.sh": "#!/bin/sh\n# MODE: ACT\necho \"marked $1\" >> marker.txt\n",
            "report.md": "Total sales: 1250\nGrowth: 12%\nRegion: north\n"}


class Agent:
    def __init__(self, ws: Path) -> None:
        self.ws, self.n = ws, 0

    def send(self, event: str, **fields) -> str:
        body = {"session_id": "s1", "cwd": str(self.ws), "hook_event_name": event, **fields}
        stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(self.ws)})
        assert code == 0
        return stdout

    def bash(self, command: str) -> dict | None:
        """The deny payload, or None when the command was allowed (and ran)."""
        self.n += 1
        fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": f"t{uuid.uuid4().hex}"}
        out = self.send("PreToolUse", **fields)
        if out:
            reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
            return json.loads(reason) if reason.startswith("{") else {"refused": reason}
        proc = subprocess.run(command, shell=True, cwd=self.ws, capture_output=True, text=True)
        self.send("PostToolUse", **fields, tool_response={"stdout": proc.stdout, "stderr": proc.stderr})
        return None


def marks(ws: Path, tag: str) -> int:
    path = ws / "marker.txt"
    return path.read_text().split("\n").count(f"marked {tag}") if path.exists() else 0


def approved_and_spent(ws: Path, agent: Agent, tag: str) -> dict:
    held = agent.bash(f"sh arms/mark.sh {tag}")
    person.answer(ws, held["askId"], "approved")
    assert agent.bash(f"sh arms/mark.sh {tag}") is None and marks(ws, tag) == 1
    return ask_book.AskBook(ws).get(held["askId"])


def edit(path: Path, **changes) -> None:
    card = json.loads(path.read_text())
    for key, value in changes.items():
        if value is DELETE:
            card.pop(key, None)
        else:
            card[key] = value
    path.write_text(json.dumps(card))


DELETE = object()


@st.composite
def card_attacks(draw) -> dict:
    return {"kind": draw(st.sampled_from(["copy", "clear"])), "offset": draw(st.integers(1, 60)),
            "renumber_id": draw(st.booleans()), "renumber_n": draw(st.booleans()),
            "clear_spent": draw(st.sampled_from([None, DELETE, {}])), "clear_stale": draw(st.booleans())}


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attack=card_attacks())
def test_a_spent_approval_copied_or_cleared_never_runs_again(ws, trust_tally, attack):
    agent = Agent(ws)
    tag = uuid.uuid4().hex[:8]  # a new action per example (hypothesis replays examples)
    card = approved_and_spent(ws, agent, tag)
    book = ask_book.AskBook(ws)
    source = book.path(card["n"])
    target = source
    if attack["kind"] == "copy":
        target = book.path(card["n"] + attack["offset"] + 1000)
        shutil.copy(source, target)
        n = card["n"] + attack["offset"] + 1000
        changes = {}
        if attack["renumber_id"]:
            changes["id"] = f"ask#{n}"
        if attack["renumber_n"]:
            changes["n"] = n
        edit(target, **changes)
    edit(target, spent=attack["clear_spent"], **({"stale": None} if attack["clear_stale"] else {}))
    again = agent.bash(f"sh arms/mark.sh {tag}")
    ok = again is not None and marks(ws, tag) == 1
    trust_tally("5 spent approval copied/cleared", ok)
    assert ok, (attack, again)


@pytest.mark.parametrize("ledger_attack", ["delete", "truncate", "edit-line", "empty", "swap-order"])
def test_clearing_spent_and_breaking_the_spent_ledger_fails_closed(ws, trust_tally, ledger_attack):
    agent = Agent(ws)
    first = approved_and_spent(ws, agent, "one")
    approved_and_spent(ws, agent, "two")
    ledger = ask_book.AskBook(ws).spent_ledger().path
    lines = ledger.read_text().splitlines()
    if ledger_attack == "delete":
        ledger.unlink()
    elif ledger_attack == "truncate":
        ledger.write_text(lines[0] + "\n")
    elif ledger_attack == "edit-line":
        ledger.write_text(lines[0].replace(first["id"], "ask#999") + "\n" + lines[1] + "\n")
    elif ledger_attack == "empty":
        ledger.write_text("")
    else:
        ledger.write_text(lines[1] + "\n" + lines[0] + "\n")
    edit(ask_book.AskBook(ws).path(first["n"]), spent=None)
    again = agent.bash("sh arms/mark.sh one")
    assert again is not None and again["code"] == "APPROVAL_STALE" and marks(ws, "one") == 1
    # the person's next answer voids what the broken ledger vouched for and starts a new one
    person.answer(ws, again["askId"], "approved")
    assert agent.bash("sh arms/mark.sh one") is None and marks(ws, "one") == 2
    assert ask_book.AskBook(ws).spent_ids()[1] == []
    trust_tally("5 spent ledger broken (fails closed)", True)


# -- flags ----------------------------------------------------------------------------------------


@st.composite
def flag_attacks(draw) -> tuple[str, dict]:
    kind = draw(st.sampled_from(["delete", "edit", "garbage", "empty", "swap", "withdraw-field", "rename"]))
    field = draw(st.sampled_from(["note", "text", "start", "withdrawn", "signature", "path", "sha256"]))
    value = draw(st.one_of(st.text(max_size=20), st.integers(0, 9), st.none()))
    return kind, {"field": field, "value": value}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # each removed flag warns; the report is the oracle
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attack=flag_attacks())
def test_a_removed_or_altered_flag_is_a_finding_for_the_person_never_a_silent_pass(ws, trust_tally, attack):
    kind, detail = attack
    for path in flags_dir(ws).glob("*.json") if flags_dir(ws).is_dir() else []:
        path.unlink()  # a fresh book per example (the ledger keeps every earlier flag: still on record)
    flag = add_flag(ws, "report.md:1", "the total is wrong")
    other = add_flag(ws, "report.md:3", "wrong region")
    path = flags_dir(ws) / f"{flag.id}.json"
    if kind == "delete":
        path.unlink()
    elif kind == "edit":
        data = json.loads(path.read_text())
        data[detail["field"]] = detail["value"]
        path.write_text(json.dumps(data))
    elif kind == "garbage":
        path.write_bytes(b"\x00\xffnot json")
    elif kind == "empty":
        path.write_text("")
    elif kind == "swap":
        path.write_text((flags_dir(ws) / f"{other.id}.json").read_text())
    elif kind == "withdraw-field":
        data = json.loads(path.read_text())
        data["withdrawn"] = "2030-01-01T00:00:00+00:00"
        path.write_text(json.dumps(data))
    else:
        path.rename(path.with_name("f-00000000.json"))
    Agent(ws).send("SessionStart", source="startup")
    outcome = stop(ws, run_dir(ws, "s1"))
    report = outcome.report
    flag_findings = [f for f in report["findings"] if f["source"] == "flag" and f["name"] == flag.id]
    record = [f for f in report["findings"] if f["source"] == "record" and flag.id in f["message"]]
    changed = kind != "edit" or json.loads(json.dumps(detail["value"])) != getattr(flag, detail["field"])
    ok = bool(flag_findings) and (bool(record) or not changed) and report["findings"]
    trust_tally("5 flag removed/altered (finding kept, said)", bool(ok))
    assert flag_findings, report["findings"]
    if changed:
        assert record and not record[0]["blocking"] and record[0]["level"] == "record", report["findings"]
        assert any(p["kind"] == "flag-tampered" for p in report["record_problems"])
