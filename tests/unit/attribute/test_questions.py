"""Questions for the person at Stop, answered once, signed, through the real paths: the Stop as the
hook runs it (vacant.hook.call.stop_pipeline on a session recorded by the real recorder) and the
person's answer through the `vacant` CLI (`vacant asks`, `vacant approve`, `vacant decline`).

- A guard's test the agent changed so that it passes is a card in the ask book (a pause: the
  agent may stop, the person is told); asked once per exact change; accepted, it is gone; rejected,
  the test as the person set it goes back to the agent as a failure to fix; a different change
  asks again.
- A check or guard the agent added or edited in vacant.toml does not run as the person's contract
  until the person accepts it; the person's own edit (out of band) is never a question.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from step_histories import Session, write_files
from weakened_suite import BROKEN, GUARD, TESTS, project

from vacant.core.calls import HookCall
from vacant.hook.call import stop_pipeline
from vacant.policy.gate.asks import answer as person
from vacant.policy.gate.asks.book import AskBook

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]

BIN = Path(sys.executable).parent
REWRITTEN = TESTS.replace("add(2, 3) == 5", "add(2, 3) == -1")
REWRITTEN_AGAIN = TESTS.replace("add(2, 3) == 5", "add(2, 3) in (-1, 5)")


@pytest.fixture(autouse=True)
def outside_any_agent(isolated_home, monkeypatch):
    for name in person.AGENT_ENV:
        monkeypatch.delenv(name, raising=False)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in person.AGENT_ENV}
    return subprocess.run([str(BIN / "vacant"), *args], cwd=root, capture_output=True, text=True, env=env, timeout=120)


def stop_hook(session: Session):
    """The agent's Stop: the recorder's last scan, then the pipeline as the hook runs it."""
    session.finish()
    response = stop_pipeline(session.recorder, HookCall("stop", session.session, session.root))
    report = json.loads((session.run_dir / "report.json").read_text())
    return response, report


def test_a_changed_test_is_asked_once_and_the_answer_stands(tmp_path):
    root = project(tmp_path)
    session = Session(root)
    session.write("lib.py", BROKEN)
    session.write("tests/test_lib.py", REWRITTEN)

    response, report = stop_hook(session)
    assert response.action == "allow"  # a pause, not a failure: the agent may stop
    (question,) = report["questions"]
    assert question == {**question, "ask": "ask#1", "kind": "changed_test", "fate": "awaiting-human", "step": 2}
    assert "add(2, 3) == -1" in question["diff"]
    (finding,) = report["findings"]
    assert finding["level"] == "changed_test" and finding["evidence"]["ask"] == "ask#1" and not finding["blocking"]
    assert "ask#1" in response.system_message and "wait on you" in response.system_message
    listed = cli(root, "asks")
    assert listed.returncode == 0 and "ask#1  awaiting-human" in listed.stdout, listed
    assert "add(2, 3) == -1" in listed.stdout and "vacant decline ask#1" in listed.stdout

    _, again = stop_hook(session)  # the same changed test: not asked again
    assert [card["id"] for card in AskBook(root).cards()] == ["ask#1"]
    assert [q["ask"] for q in again["questions"]] == ["ask#1"]

    rejected = cli(root, "decline", "ask#1")
    assert rejected.returncode == 0 and "rejected ask#1" in rejected.stdout, rejected
    response, report = stop_hook(session)
    (finding,) = report["findings"]
    assert finding["blocking"] and finding["evidence"]["method"] == "rejected_test", finding
    assert response.action == "block" and "rejected your change to this test" in response.reason
    assert "test_add" in response.reason

    session.write("tests/test_lib.py", REWRITTEN_AGAIN)  # another change of the test: another question
    response, report = stop_hook(session)
    assert [(q["ask"], q["fate"]) for q in report["questions"]] == [("ask#2", "awaiting-human")]
    assert response.action == "allow"
    assert AskBook(root).get("ask#1")["decision"]["decision"] == "declined"  # an answered one stays answered

    accepted = cli(root, "approve", "ask#2")
    assert accepted.returncode == 0 and "accepted ask#2" in accepted.stdout, accepted
    response, report = stop_hook(session)
    assert report["findings"] == [] and [(q["ask"], q["fate"]) for q in report["questions"]] == [("ask#2", "approved")]
    assert "wait on you" not in (response.system_message or "")
    assert "ask#2" not in cli(root, "asks").stdout  # an accepted question is not an approval waiting to be used


def test_an_acceptance_the_agent_signed_itself_does_not_count(tmp_path):
    """The agent holds no key behind the wall, but a card it edits (or signs with a key it found)
    has no `human_decided` from the person's own `vacant approve`: the question stands."""
    root = project(tmp_path)
    session = Session(root)
    session.write("lib.py", BROKEN)
    session.write("tests/test_lib.py", REWRITTEN)
    stop_hook(session)
    book = AskBook(root)
    card = book.get("ask#1")
    from vacant.core.keys import sign
    from vacant.policy.gate.asks.book import signed_body

    decision = {"decision": "approved", "at": 1.0, "expires_at": None, "refuse_if_moved": False, "workspace": None}
    decision["signature"] = sign(signed_body(card, decision))
    card["decision"] = decision
    book.save(card)
    _, report = stop_hook(session)
    assert [f["level"] for f in report["findings"]] == ["changed_test"]
    assert report["questions"][0]["fate"] != "approved"


EXTRA = '\n[[guard]]\nname = "quick"\ncommand = "true"\n'


def test_a_contract_the_agent_changed_runs_as_the_person_set_it_until_accepted(tmp_path):
    root = project(tmp_path)
    session = Session(root)
    narrowed = GUARD.replace(' tests"', ' tests -k test_mul"')
    session.write("lib.py", BROKEN)
    session.write("vacant.toml", narrowed + EXTRA)  # edits the guard, adds one

    response, report = stop_hook(session)
    asked = {q["about"]: q for q in report["questions"]}
    assert sorted(asked) == ["quick", "suite"] and {q["fate"] for q in asked.values()} == {"awaiting-human"}
    assert asked["suite"]["step"] == 2 and "-k test_mul" in asked["suite"]["proposed"]
    assert [c["name"] for c in report["checks"]] == ["suite"]  # "quick" does not run; "suite" as the person set it
    blocking = [f for f in report["findings"] if f["blocking"]]
    assert blocking and all(f["name"] == "suite" and f["flip_step"] == 1 for f in blocking), report["findings"]
    assert response.action == "block" and "waits on the person" in response.reason
    shown = cli(root, "report").stdout
    assert "waits on you" in shown and "-k test_mul" in shown and 'name = "quick"' in shown, shown

    session.write("vacant.toml", narrowed + EXTRA.replace('"true"', '":"'))  # "quick" changed again
    _, report = stop_hook(session)
    again = {q["about"]: q["ask"] for q in report["questions"]}
    assert again == {"suite": asked["suite"]["ask"], "quick": "ask#3"}  # the same edit of "suite": not asked again
    superseded = AskBook(root).get(asked["quick"]["ask"])["stale"]
    assert superseded["next"] == "ask#3" and f"{asked['quick']['ask']} " not in cli(root, "asks").stdout

    for card in again.values():
        assert cli(root, "approve", card).returncode == 0
    response, report = stop_hook(session)
    assert sorted(c["name"] for c in report["checks"]) == ["quick", "suite"]
    assert report["findings"] == [] and response.action == "allow", report["findings"]


def test_the_persons_own_edit_of_the_contract_is_never_a_question(tmp_path):
    root = project(tmp_path)
    session = Session(root)
    session.write("NOTES.md", "n\n")
    write_files(root, {"vacant.toml": GUARD + EXTRA})  # the person's editor, between the agent's steps
    session.write("NOTES.md", "n\nm\n")
    _, report = stop_hook(session)
    assert report["questions"] == [] and sorted(c["name"] for c in report["checks"]) == ["quick", "suite"]
