"""Without the wall the agent's own commands can write vacant's state directory: each loss of the
record is said at the next hook call (vacant/core/tally.py, vacant/record/losswatch.py), never only
by a later `vacant doctor`.

The oracle is the sequence itself: every edit is made by the test, so whether it lost something
of the record (an attack) or was vacant's own or harmless is known by construction. After each
one, the next hook call on an ACT command must be held naming the loss when any attack came
before, and be the gate's ordinary question (an ask card) when none did. What an agent holding the
key can still do unseen is said in docs/TRUST.md; here the agent edits without it.
"""

from __future__ import annotations

import hmac
import json
import shutil
import subprocess
import uuid
from hashlib import sha256
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vacant.core import tally
from vacant.core.locations import state_dir, user_config_dir, workspace_key
from vacant.hook import call as hook
from vacant.policy.contract.flags import add_flag, flags_dir
from vacant.policy.gate.asks import answer as person
from vacant.policy.gate.asks import book as ask_book

pytestmark = pytest.mark.usefixtures("isolated_home")

HELD = "vacant's record of this workspace was changed by something other than vacant"


@pytest.fixture(autouse=True)
def outside_any_agent(monkeypatch):
    for name in person.AGENT_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ws_files() -> dict:
    return {"arms/mark.sh": "#!/bin/sh\n# MODE: ACT\necho \"marked $1\" >> marker.txt\n", "notes.md": "a\n"}


class Agent:
    """One session's hook calls, answered in-process as the installed hook answers them."""

    def __init__(self, ws: Path, session: str = "s1") -> None:
        self.ws, self.session = ws, session

    def send(self, event: str, **fields) -> dict:
        body = {"session_id": self.session, "cwd": str(self.ws), "hook_event_name": event, **fields}
        stdout, code = hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(self.ws)})
        assert code == 0
        return json.loads(stdout) if stdout else {}

    def bash(self, command: str) -> dict:
        """The answer to the Pre (a deny's reason under "deny"); an allowed command runs, then its Post."""
        fields = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": f"t{uuid.uuid4().hex}"}
        answer = self.send("PreToolUse", **fields)
        reason = (answer.get("hookSpecificOutput") or {}).get("permissionDecisionReason")
        if reason is not None:
            return {"deny": reason, "said": answer.get("systemMessage", "")}
        proc = subprocess.run(command, shell=True, cwd=self.ws, capture_output=True, text=True)
        self.send("PostToolUse", **fields, tool_response={"stdout": proc.stdout, "stderr": proc.stderr})
        return {"said": answer.get("systemMessage", "")}


def installed_with_tally(ws: Path) -> None:
    """What `vacant init` does for the tally (the fixture's install record is init's without it)."""
    tally.accept(ws)


def approved_and_spent(ws: Path, agent: Agent) -> tuple[str, dict]:
    """An ACT command held, approved by the person and run once: (its tag, the held card's reply)."""
    tag = uuid.uuid4().hex[:8]
    held = json.loads(agent.bash(f"sh arms/mark.sh {tag}")["deny"])
    person.answer(ws, held["askId"], "approved")
    assert "deny" not in agent.bash(f"sh arms/mark.sh {tag}") and marks(ws, tag) == 1
    return tag, held


def marks(ws: Path, tag: str) -> int:
    path = ws / "marker.txt"
    return path.read_text().split("\n").count(f"marked {tag}") if path.exists() else 0


# -- the parts ------------------------------------------------------------------------------------


@given(key=st.binary(min_size=0, max_size=100), data=st.binary(max_size=300))
def test_the_lean_hmac_is_the_standard_one(key, data):
    assert tally.mac(key, data) == hmac.new(key, data, sha256).hexdigest()


@settings(max_examples=40)
@given(obj=st.dictionaries(st.text(max_size=8), st.recursive(st.none() | st.integers() | st.text(max_size=8),
                                                              lambda inner: st.lists(inner, max_size=3), max_leaves=6),
                           min_size=1, max_size=5),
       at=st.integers(0, 10_000), byte=st.integers(0, 255))
def test_a_sealed_run_state_holds_until_any_byte_changes(obj, at, byte):
    key = b"k" * 32
    raw = tally.sealed_json(obj, key)
    assert tally.seal_holds(raw, key) and json.loads(raw)["mac"]
    assert {k: v for k, v in json.loads(raw).items() if k != "mac"} == obj
    at %= len(raw)
    if raw[at] != byte:
        changed = raw[:at] + bytes([byte]) + raw[at + 1:]
        assert not tally.seal_holds(changed, key)
    assert not tally.seal_holds(raw, b"o" * 32)


# -- generated edits of the record --------------------------------------------------------------

LEDGER_ANCHORS = "anchors/{key}.json"  # the ledgers' own anchors (vacant/core/ledger.py)


def _anchors(ws: Path) -> Path:
    return user_config_dir() / "anchors" / f"{workspace_key(ws)}.json"


def _run_json(ws: Path, session: str = "s1") -> Path:
    return state_dir(ws) / "runs" / session / "run.json"


def reset_spent(ws: Path) -> None:  # the ledger and its anchor, as if nothing was ever spent
    (state_dir(ws) / "asks" / "spent.jsonl").unlink(missing_ok=True)
    _anchors(ws).unlink(missing_ok=True)
    for card in (state_dir(ws) / "asks").glob("ask-*.json"):
        data = json.loads(card.read_text())
        data.pop("spent", None)
        card.write_text(json.dumps(data))


def remove_flag(ws: Path) -> None:  # the flag file, its ledger line and the anchor
    ledger = flags_dir(ws) / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True) if ledger.exists() else []
    ledger.write_text("".join(lines[:-1])) if lines else None
    for flag in sorted(flags_dir(ws).glob("*.json"))[-1:]:
        flag.unlink()
    _anchors(ws).unlink(missing_ok=True)


def edit_run_json(ws: Path) -> None:  # later steps moved to another agent
    path = _run_json(ws)
    data = json.loads(path.read_text())
    data.pop("mac", None)
    data.setdefault("agents", {})["main"] = {"definition": "someone-else", "model": "other"}
    path.write_text(json.dumps(data))


def delete_run_json(ws: Path) -> None:
    _run_json(ws).unlink(missing_ok=True)


def delete_earlier_run(ws: Path) -> None:  # what `python -c 'shutil.rmtree(...)'` or node or perl do
    shutil.rmtree(state_dir(ws) / "runs" / "s0", ignore_errors=True)


def delete_tally(ws: Path) -> None:
    Path(tally.tally_path(ws)).unlink(missing_ok=True)


def edit_tally(ws: Path) -> None:  # the expectations reset without the key
    path = Path(tally.tally_path(ws))
    if not path.exists():
        return
    signature, _, body = path.read_bytes().partition(b"\n")
    data = json.loads(body)
    data.update(lost=[], ledgers={"spent": 0, "flags": 0})
    path.write_bytes(signature + b"\n" + json.dumps(data, sort_keys=True).encode())


def persons_flag(ws: Path) -> None:  # vacant's own ledger append (the person's command)
    add_flag(ws, "notes.md:1", "the person's own flag")


def another_session(ws: Path) -> None:  # vacant makes a new run
    Agent(ws, f"s-{uuid.uuid4().hex[:6]}").bash("ls")


def unrelated_files(ws: Path) -> None:
    (ws / "notes.md").write_text(uuid.uuid4().hex)
    (state_dir(ws) / "scratch-of-nobody.txt").write_text("x")


# attack -> words the held call's reason must name
ATTACKS = {reset_spent: "spent ledger", remove_flag: "flags ledger", edit_run_json: "run.json was edited",
           delete_run_json: "run.json is gone", delete_earlier_run: "run s0 was deleted",
           delete_tally: "tally", edit_tally: "tally"}
BENIGN = (persons_flag, another_session, unrelated_files)
TALLY_LOST = (delete_tally, edit_tally)  # past these nothing else can be compared: every call names the tally


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.sampled_from([*ATTACKS, *BENIGN]), min_size=1, max_size=5))
@example(edits=[reset_spent])
@example(edits=[persons_flag, remove_flag])
@example(edits=[edit_run_json])
@example(edits=[delete_earlier_run])
def test_every_loss_of_the_record_is_said_at_the_next_hook_and_nothing_else(tmp_path_factory, edits, monkeypatch):
    ws = tmp_path_factory.mktemp("ws")
    (ws / "arms").mkdir()
    (ws / "arms" / "mark.sh").write_text("#!/bin/sh\n# MODE: ACT\necho \"marked $1\" >> marker.txt\n")
    (ws / "notes.md").write_text("a\n")
    from vacant.core.locations import mark_installed

    mark_installed(ws)
    Agent(ws, "s0").bash("ls")  # an earlier session's run
    agent = Agent(ws)
    spent = json.loads(agent.bash("sh arms/mark.sh first")["deny"])  # one approval spent: the ledger has a line
    person.answer(ws, spent["askId"], "approved")
    assert "deny" not in agent.bash("sh arms/mark.sh first")
    persons_flag(ws)
    installed_with_tally(ws)
    attacked, tally_gone = [], False
    for edit in edits:
        edit(ws)
        answer = agent.bash(f"sh arms/mark.sh {uuid.uuid4().hex[:6]}")
        if edit in ATTACKS:
            attacked.append(edit)
            tally_gone = tally_gone or edit in TALLY_LOST
        if not attacked:
            assert HELD not in answer.get("deny", "") and "askId" in answer.get("deny", ""), (edits, answer)
            continue
        assert HELD in answer.get("deny", ""), (edits, answer)
        if edit in ATTACKS:
            named = "tally" if tally_gone else ATTACKS[edit]
            assert named in answer["deny"], (edits, answer)
    stopped = agent.send("Stop")
    assert ("the record of this workspace lost something" in stopped.get("systemMessage", "")) == bool(attacked)


@pytest.mark.slow
def test_a_reset_ledger_lets_no_approval_run_twice_and_doctor_and_init_say_it(ws, capsys, monkeypatch):
    from vacant.cli import main

    installed_with_tally(ws)
    agent = Agent(ws)
    tag, held = approved_and_spent(ws, agent)
    reset_spent(ws)  # the agent's python3 -c: ledger, anchor and the card's spent mark
    again = agent.bash(f"sh arms/mark.sh {tag}")
    assert HELD in again["deny"] and "spent ledger" in again["deny"] and marks(ws, tag) == 1
    assert "spent ledger" in again["said"]  # the call that first sees it says it to the person
    assert "spent ledger" in agent.send("Stop")["systemMessage"]
    monkeypatch.chdir(ws)
    monkeypatch.setattr("sys.argv", ["vacant", "doctor", "--json"])
    with pytest.raises(SystemExit):
        main()
    lines = {line["name"]: line for line in json.loads(capsys.readouterr().out)["lines"]}
    assert lines["record"]["status"] == "fail" and "spent ledger" in lines["record"]["detail"]
    # the person accepts the record as it is: the approval whose spending was erased is void
    monkeypatch.setattr("sys.argv", ["vacant", "init"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None) and "voided" in capsys.readouterr().err
    after = agent.bash(f"sh arms/mark.sh {tag}")
    assert HELD not in after.get("deny", "") and marks(ws, tag) == 1
    assert ask_book.AskBook(ws).get(held["askId"]).get("stale")


@pytest.mark.slow
def test_an_agent_holding_the_key_rewrites_the_tally_unseen(ws):
    """The limit docs/TRUST.md states, held as a test: unwalled, the agent can read the key; a
    ledger reset with the tally re-signed to match is not noticed, and the approval runs twice.
    (Only the wall keeps the key out of reach.) When this fails, the limit moved: say so there."""
    installed_with_tally(ws)
    agent = Agent(ws)
    tag, held = approved_and_spent(ws, agent)
    reset_spent(ws)
    key = (user_config_dir() / "key").read_bytes()  # what an unwalled interpreter can do
    data, _why = tally.read(ws, key)
    tally.write(ws, {**data, "ledgers": {**data["ledgers"], "spent": 0}}, key)
    assert "deny" not in agent.bash(f"sh arms/mark.sh {tag}") and marks(ws, tag) == 2


def test_the_persons_own_flags_filed_while_hooks_check_are_never_a_loss(ws):
    """`vacant flag` appends to its ledger outside the workspace lock and notes the size in the
    tally: a hook's check in between must not call the person's own write a loss (the append and
    the note are one under the tally's lock; checked without it, this failed)."""
    import threading

    installed_with_tally(ws)
    filed = threading.Event()

    def person_files_flags() -> None:
        for n in range(25):
            add_flag(ws, "notes.md:1", f"the person's flag {n}")
        filed.set()

    writer = threading.Thread(target=person_files_flags)
    writer.start()
    key, seen = (user_config_dir() / "key").read_bytes(), []
    while not filed.is_set():
        losses, _data = tally.check(ws, state_dir(ws), key)
        seen += losses
    writer.join()
    assert seen == [] and tally.check(ws, state_dir(ws), key)[0] == []
