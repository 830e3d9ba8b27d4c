"""Class 9 of issue 11: `vacant verify` prints each warning on one line (never Python source), and
`vacant report` mentions every record problem found on the way.

A recorded run with a Stop report is damaged in generated ways (torn lines, an edited, deleted or
appended record, a cut tail, a flag file removed, the spent-approval ledger emptied); the real
CLI then runs. The oracle: every output line has the shape `<label>: …` with no source-code
line or traceback, and each damage done shows up by name in verify's and report's output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vacant.hook import call as hook
from vacant.attribute.stop import save_report, stop
from vacant.cli import app, one_line_warning
from vacant.core.locations import run_dir
from vacant.policy.gate.asks.book import AskBook
from vacant.policy.contract.flags import add_flag, flags_dir
from vacant.store.steplog import StepLog

pytestmark = pytest.mark.usefixtures("isolated_home")
BIN = Path(sys.executable).parent
LINE = re.compile(r"^(vacant: warning: |warning: |TAMPERED: |record problem: |\S+: chain (intact|broken)|run \S+:|"
                  r"read_coverage:|  |decision:)")


@pytest.fixture
def ws_files() -> dict:
    return {"report.md": "Total sales: 1250\nGrowth: 12%\n"}


def send(ws: Path, event: str, session: str, **fields) -> None:
    body = {"session_id": session, "cwd": str(ws), "hook_event_name": event, **fields}
    assert hook.run("claude", json.dumps(body).encode(), {"CLAUDE_PROJECT_DIR": str(ws)})[1] == 0


def recorded(ws: Path) -> tuple[str, Path]:
    """A fresh run (its own session) with a Stop report, and a flag standing."""
    session = "s" + uuid.uuid4().hex[:10]
    for path in flags_dir(ws).glob("*.json") if flags_dir(ws).is_dir() else []:
        path.unlink()
    add_flag(ws, "report.md:1", "the total is wrong")
    send(ws, "SessionStart", session, source="startup")
    for i in range(3):
        path = ws / f"n{i}.txt"
        fields = {"tool_name": "Write", "tool_use_id": f"w{i}", "tool_input": {"file_path": str(path), "content": "x"}}
        send(ws, "PreToolUse", session, **fields)
        path.write_text("x")
        send(ws, "PostToolUse", session, **fields)
    directory = run_dir(ws, session)
    save_report(directory, stop(ws, directory).report)
    return session, directory


DAMAGES = ("torn", "edit", "delete", "append-garbage", "cut-tail", "flag-removed", "spent-emptied")
NAMES = {"torn": "torn", "edit": "edited", "delete": "deleted", "append-garbage": "torn", "cut-tail": "truncated",
         "flag-removed": "was removed", "spent-emptied": None}


def damage(ws: Path, directory: Path, kind: str) -> None:
    log = directory / "events.jsonl"
    lines = log.read_bytes().split(b"\n")[:-1]
    if kind == "torn":
        lines.insert(3, b'{"v":1,"seq":')
    elif kind == "edit":
        record = json.loads(lines[2])
        record["ts"] = 1.0
        lines[2] = json.dumps(record, separators=(",", ":")).encode()
    elif kind == "delete":
        del lines[4]
    elif kind == "append-garbage":
        lines.append(b"\x00\xffgarbage")
    elif kind == "cut-tail":
        lines = lines[:-2]
    elif kind == "flag-removed":
        for path in flags_dir(ws).glob("*.json"):
            path.unlink()
    log.write_bytes(b"\n".join(lines) + b"\n")


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "vacant"), *args], cwd=ws, capture_output=True, text=True, env=os.environ.copy())


def one_line_each(text: str) -> bool:
    return all(LINE.match(line) for line in text.splitlines()) and "warnings.warn" not in text \
        and "Traceback" not in text and 'File "' not in text


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # the Stop report run in-process warns; the CLI is the oracle
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(DAMAGES[:-1]), min_size=1, max_size=3, unique=True))
def test_verify_and_report_say_each_problem_on_one_line(ws, trust_tally, kinds):
    session, directory = recorded(ws)
    for kind in sorted(kinds, key=lambda k: k != "cut-tail"):  # a cut first: it would cut later damage off
        damage(ws, directory, kind)
    verified = cli(ws, "verify", session)
    reported = cli(ws, "report", session)
    ok = one_line_each(verified.stdout + verified.stderr) and one_line_each(reported.stdout + reported.stderr)
    for kind in kinds:
        ok = ok and NAMES[kind] in verified.stdout and NAMES[kind] in reported.stdout
    trust_tally("9 verify/report one line each, every problem named", ok)
    assert one_line_each(verified.stdout + verified.stderr), verified.stdout + verified.stderr
    assert one_line_each(reported.stdout + reported.stderr), reported.stdout + reported.stderr
    for kind in kinds:
        assert NAMES[kind] in verified.stdout, (kind, verified.stdout)
        assert NAMES[kind] in reported.stdout, (kind, reported.stdout)
    fatal = {"edit", "delete", "cut-tail"} & set(kinds)
    assert (verified.returncode != 0) == bool(fatal)


@pytest.mark.slow
def test_an_emptied_spent_ledger_is_named_by_verify_and_report(ws, trust_tally):
    session, _directory = recorded(ws)
    AskBook(ws).spent_ledger().append({"ask": "ask#1", "fingerprint": "f", "at": 0.0, "run": session, "key": "k"})
    AskBook(ws).spent_ledger().path.write_text("")
    verified, reported = cli(ws, "verify", session), cli(ws, "report", session)
    assert "spent-approval ledger" in verified.stdout and "spent-approval ledger" in reported.stdout
    assert one_line_each(verified.stdout + verified.stderr) and one_line_each(reported.stdout + reported.stderr)
    trust_tally("9 verify/report one line each, every problem named", True)


# -- a fast corpus: the verify command on logs damaged at generated places -------------------------


@st.composite
def log_damages(draw) -> list[tuple[str, int]]:
    kinds = st.sampled_from(["torn-insert", "flip", "delete", "duplicate", "swap", "garbage-append", "cut"])
    return draw(st.lists(st.tuples(kinds, st.integers(0, 30)), min_size=0, max_size=4))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damages=log_damages())
@example(damages=[("duplicate", 0), ("flip", 0), ("delete", 0)])  # a flip undone by a delete: nothing edited
def test_verify_on_generated_damage_prints_one_line_per_problem(ws, monkeypatch, trust_tally, damages):
    session = "v" + uuid.uuid4().hex[:10]
    log = StepLog(run_dir(ws, session))
    for i in range(20):
        log.emit("read", origin="file", ref=f"f{i}", object="0" * 32, step=None)
    lines = log.path.read_bytes().split(b"\n")[:-1]
    for kind, at in damages:
        at = at % max(1, len(lines))
        if kind == "torn-insert":
            lines.insert(at, b'{"v":1,"seq":')
        elif kind == "flip" and lines and lines[at].startswith(b"{"):
            lines[at] = lines[at].replace(b'"ref":"f', b'"ref":"g', 1)
        elif kind == "delete" and lines:
            del lines[at]
        elif kind == "duplicate" and lines:
            lines.insert(at, lines[at])
        elif kind == "swap" and len(lines) > 1:
            other = (at + 1) % len(lines)
            lines[at], lines[other] = lines[other], lines[at]
        elif kind == "garbage-append":
            lines.append(b"\xff\x00 not json")
        elif kind == "cut":
            lines = lines[: max(1, at)]
    # edited: a flipped record is still in the log (a later delete or cut may have taken it out again)
    edited = any(b'"ref":"g' in line for line in lines)
    log.path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.chdir(ws)
    monkeypatch.setattr(warnings, "formatwarning", one_line_warning)
    result = CliRunner().invoke(app, ["verify", session])
    text = result.output
    ok = result.exit_code in (0, 1) and one_line_each(text) and (not edited or result.exit_code == 1)
    trust_tally("9 verify one line each (generated damage)", ok)
    assert result.exit_code in (0, 1), (result.exception, text)
    assert one_line_each(text), text
    if edited:
        assert result.exit_code == 1 and "TAMPERED" in text, text
