"""The CLI of contracts, checks, flags and hints: exit codes from the closed list, one-sentence errors, JSON."""

from __future__ import annotations

import json
import sys

import pytest

from vacant.core.locations import state_dir

from vacant.cli import main
from vacant.core.exitcodes import Exit


@pytest.fixture
def ws_files() -> dict:
    return {".vacant": None}


@pytest.fixture(autouse=True)
def in_ws(isolated_home, ws, monkeypatch) -> None:
    monkeypatch.chdir(ws)


def vacant(capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["vacant", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_check_exit_codes_nothing_failed_ok(ws, capsys, monkeypatch):
    code, out, _ = vacant(capsys, monkeypatch, "check")
    assert code == Exit.NOTHING_TO_VERIFY and "nothing to verify" in out
    code, out, err = vacant(capsys, monkeypatch, "contract", "add", "has-report", "--", "test", "-f", "report.md")
    assert code == Exit.OK and "added check 'has-report'" in out
    code, out, _ = vacant(capsys, monkeypatch, "check", "--json")
    report = json.loads(out)
    assert code == Exit.FAILED and report["findings"][0]["name"] == "has-report" and report["passed"] is False
    (ws / "report.md").write_text("done\n")
    code, out, _ = vacant(capsys, monkeypatch, "check")
    assert code == Exit.OK and "PASS check has-report" in out


def test_contract_add_refusals_are_one_line_user_errors(ws, capsys, monkeypatch):
    code, _, err = vacant(capsys, monkeypatch, "contract", "add", "always", "--", "true")
    assert code == Exit.USER_ERROR
    assert err.startswith("vacant: check 'always' passes now") and err.count("\n") == 1
    code, _, err = vacant(capsys, monkeypatch, "contract", "add", "two", "--", "echo a\necho b")
    assert code == Exit.USER_ERROR and "make it one line" in err
    (ws / "vacant.toml").write_text("checks = 1\n")
    code, _, err = vacant(capsys, monkeypatch, "contract", "list")
    assert code == Exit.USER_ERROR and "unknown key 'checks'" in err


def test_contract_add_env_warning_and_list_json_with_probe_evidence(ws, capsys, monkeypatch):
    code, _, err = vacant(capsys, monkeypatch, "contract", "add", "lint", "--", "nosuch-linter-xyz check .")
    assert code == Exit.OK and "env/nosuch-linter-xyz" in err
    code, _, _ = vacant(capsys, monkeypatch, "contract", "add", "--precondition", "has-ws", "--", "test -d .")
    assert code == Exit.OK
    code, out, _ = vacant(capsys, monkeypatch, "contract", "list", "--json")
    rows = {row["name"]: row for row in json.loads(out)["checks"]}
    assert rows["lint"]["probe"]["exit_code"] == 127 and rows["lint"]["probe"]["env"] == "nosuch-linter-xyz"
    assert rows["has-ws"]["kind"] == "guard" and rows["has-ws"]["probe"]["exit_code"] == 0
    code, out, _ = vacant(capsys, monkeypatch, "check")
    assert code == Exit.FAILED and "ENV  check lint" in out and "cannot fix" in out


def test_flag_flags_unflag(ws, capsys, monkeypatch):
    (ws / "notes.md").write_text("a\nwrong line\nc\n")
    code, out, _ = vacant(capsys, monkeypatch, "flag", "notes.md:2", "this is wrong")
    assert code == Exit.OK
    flag_id = out.split(" as ")[1].split(":")[0]
    code, out, _ = vacant(capsys, monkeypatch, "check")
    assert code == Exit.FAILED and f"FLAG {flag_id} notes.md:2: this is wrong" in out
    code, out, _ = vacant(capsys, monkeypatch, "flags", "--json")
    [row] = json.loads(out)
    assert (row["id"], row["state"], row["line"]) == (flag_id, "standing", 2)
    code, out, _ = vacant(capsys, monkeypatch, "unflag", flag_id)
    assert code == Exit.OK
    code, out, _ = vacant(capsys, monkeypatch, "flags")
    assert "withdrawn" in out
    code, _, err = vacant(capsys, monkeypatch, "flag", "notes.md:9", "past the end")
    assert code == Exit.USER_ERROR and "line 9 is past the end of notes.md" in err
    code, _, err = vacant(capsys, monkeypatch, "unflag", "f-12345678")
    assert code == Exit.USER_ERROR and "no flag" in err


def test_tampered_flag_warns_on_stderr_and_still_stands(ws, capsys, monkeypatch):
    (ws / "notes.md").write_text("wrong\n")
    vacant(capsys, monkeypatch, "flag", "notes.md:1", "wrong")
    [path] = (state_dir(ws) / "flags").glob("*.json")
    path.write_text(path.read_text().replace('"wrong"', '"fine"', 1))
    code, out, err = vacant(capsys, monkeypatch, "check")
    assert code == Exit.FAILED and path.stem in err and "was altered" in err
    assert err.count("\n") == 1 and "warnings.warn" not in err  # one line, never Python source


def test_hints_without_a_run_and_with_an_unknown_run(ws, capsys, monkeypatch):
    (ws / "vacant.toml").write_text('deliverables = ["report.md"]\n')
    (ws / "report.md").write_text("We sold 4242 units.\n")
    code, out, _ = vacant(capsys, monkeypatch, "hints", "--json")
    data = json.loads(out)
    assert code == Exit.OK and data["run"] is None
    assert [(h["kind"], h["line"], h["value"], h["hint"]) for h in data["hints"]] == [("unsourced_number", 1, "4242", True)]
    code, _, err = vacant(capsys, monkeypatch, "hints", "nosuchrun")
    assert code == Exit.USER_ERROR
